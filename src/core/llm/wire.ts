/**
 * The request builder: the one place a transcript becomes the messages of a request. The
 * transcript may hold consecutive user messages (other people's messages in a thread, messages
 * queued while a turn ran, the next message after a cancelled turn, the note of a resumed turn);
 * strict chat templates (open-weight models as vLLM serves them) refuse `user, user`, so each run
 * of user messages is sent as one, their texts separated by a blank line. The transcript itself is
 * never rewritten: merging is a pure function of it, so consecutive requests still extend each
 * other (prefix consistency) as long as the transcript only grows.
 */
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import type { Message } from "./types.js";

/** Between the texts of merged user messages. */
export const USER_MESSAGE_JOIN = "\n\n";

/** `messages` with every run of consecutive user messages merged into one. */
export function mergeUserRuns(messages: readonly Message[]): Message[] {
  const out: Message[] = [];
  for (const m of messages) {
    const prev = out.at(-1);
    if (m.role === "user" && prev?.role === "user") {
      out[out.length - 1] = { role: "user", content: `${prev.content}${USER_MESSAGE_JOIN}${m.content}` };
    } else out.push(m);
  }
  return out;
}

/** The system block, then the transcript as the endpoint receives it. */
export function requestMessages(system: string, messages: readonly Message[]): ChatCompletionMessageParam[] {
  return [{ role: "system", content: system }, ...(mergeUserRuns(messages) as ChatCompletionMessageParam[])];
}
