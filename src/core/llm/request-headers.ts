/**
 * Headers the client sends with every completion. OpenAI-compatible servers ignore unknown headers;
 * they let a request log (and the scripted test endpoint) group requests by conversation without
 * parsing prompts. The conversation key is hashed so channel ids never leave the process.
 */
import { hash } from "node:crypto";
import type { UsageTags } from "./types.js";

/** Stable, opaque id of the conversation a request belongs to. */
export const CONVERSATION_HEADER = "x-neo-conversation";
/** `CallPurpose` of the request: turn, compaction, writeback or plan. */
export const PURPOSE_HEADER = "x-neo-purpose";

/**
 * Recent conversations' ids, by key: a conversation's requests come in runs (a turn, its
 * write-back), and its id never changes. Oldest dropped first.
 */
const ids = new Map<string, string>();
const IDS_SIZE = 256;

function conversationId(conversation: string): string {
  let id = ids.get(conversation);
  if (id === undefined) {
    id = hash("sha256", conversation, "hex").slice(0, 16);
    if (ids.size >= IDS_SIZE) ids.delete(ids.keys().next().value!);
    ids.set(conversation, id);
  }
  return id;
}

export function requestHeaders(tags: UsageTags): Record<string, string> {
  const headers: Record<string, string> = { [PURPOSE_HEADER]: tags.purpose };
  if (tags.conversation) headers[CONVERSATION_HEADER] = conversationId(tags.conversation);
  return headers;
}
