/**
 * In-process Conversations over the real file store, the real loop and the gate MCP server, with
 * an IO that records what each conversation was told.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createConversations } from "../../src/core/conversations/create-conversations.js";
import type {
  ConversationIO,
  ConversationLimits,
  ConversationsService,
  InboundMessage,
} from "../../src/core/conversations/types.js";
import { CONVERSATION_HEADER, requestHeaders } from "../../src/core/llm/request-headers.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/types.js";
import { type ConversationDeps, createConversationDeps } from "../fixtures/conversation-deps.js";
import type { ScriptedOpenAI, ScriptedRequest } from "../support/scripted-openai.js";
import { contentText } from "../support/transcript-checks.js";

export interface Told {
  conversation: string;
  kind: "say" | "status" | "notice" | "queued";
  text: string;
}

export interface Harness {
  dir: string;
  store: Store;
  deps: ConversationDeps;
  told: Told[];
  open(limits?: Partial<ConversationLimits>, instanceId?: string): Promise<ConversationsService>;
  close(): Promise<void>;
}

export const LIMITS: ConversationLimits = {
  maxConcurrentTurns: 4,
  // Tests of the turn rate set their own bucket; the others are never held back by it.
  userTurns: { perMinute: 1_000_000, burst: 1_000_000 },
  recallTurns: 16,
  idleEvictMs: 60_000,
  retentionMs: 30 * 86_400_000,
  leaseMs: 5000,
  dedupeTtlMs: 60_000,
  sweepMs: 5000,
};

/**
 * `redisUrl`: the conversations keep their state in that Redis instead of the file store
 * (`redisCluster`: a Redis Cluster's seed nodes).
 * `prefix`: the store's key prefix (a shared Redis needs one no other test uses).
 */
export async function createHarness(
  ep: ScriptedOpenAI,
  opts: { redisUrl?: string; redisCluster?: boolean; prefix?: string } = {},
): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), "neo-conv-"));
  const store = await createStore({
    dataDir: join(dir, "data"),
    prefix: opts.prefix ?? "neo:",
    redisUrl: opts.redisUrl,
    redisCluster: opts.redisCluster,
  });
  const deps = await createConversationDeps({ endpointUrl: ep.url, gateDir: dir });
  const told: Told[] = [];
  const opened: ConversationsService[] = [];
  const io = (conversation: string): ConversationIO => {
    const tell = (kind: Told["kind"]) => async (text: string) => {
      told.push({ conversation, kind, text });
    };
    return {
      reporter: { say: tell("say"), status: tell("status"), notice: tell("notice") },
      approvals: { present: async () => undefined, update: async () => {} },
      acknowledgeQueued: async (m) => {
        told.push({ conversation, kind: "queued", text: m.id });
      },
    };
  };
  return {
    dir,
    store,
    deps,
    told,
    async open(limits = {}, instanceId = "solo") {
      const c = createConversations({
        store,
        newAgent: deps.newAgent,
        io,
        instanceId,
        limits: { ...LIMITS, ...limits },
      });
      await c.start();
      opened.push(c);
      return c;
    },
    async close() {
      for (const c of opened) await c.shutdown(1000);
      await deps.close();
      await store.close();
    },
  };
}

let seq = 0;
export function inbound(conversation: string, text: string, who = "ann"): InboundMessage {
  return {
    id: `msg-${++seq}`,
    conversation,
    speaker: { userKey: `console:local:${who}`, displayName: who },
    text,
    shared: false,
    place: { kind: "dm", workspace: "local" },
    receivedAt: Date.now(),
  };
}

/** Requests the endpoint received for one conversation. */
export function requestsOf(ep: ScriptedOpenAI, conversation: string): ScriptedRequest[] {
  const header = requestHeaders({ purpose: "turn", conversation })[CONVERSATION_HEADER];
  return ep.requests.filter((r) => r.conversation === header);
}

export function saysOf(told: Told[], conversation: string): string[] {
  return told.filter((t) => t.conversation === conversation && t.kind === "say").map((t) => t.text);
}

/** Tokens `Q<n>` of the user messages after the last answer: what the model answers now. */
function unanswered(req: ScriptedRequest): string[] {
  const out: string[] = [];
  for (let i = req.messages.length - 1; i >= 0; i--) {
    const m = req.messages[i]!;
    if (m.role === "assistant" && !m.tool_calls?.length) break;
    if (m.role === "user") out.unshift(...(contentText(m.content).match(/Q\d+/g) ?? []));
  }
  return out;
}

/** The model's answer names every question it answers: `answered Q1 Q2`. */
export const answerQuestions = (req: ScriptedRequest) => ({ text: `answered ${unanswered(req).join(" ")}` });

/** The first turn's answer is held until the returned `release`; every later one answers at once. */
export function holdFirstAnswer(ep: ScriptedOpenAI): () => void {
  let release!: () => void;
  const held = new Promise<void>((r) => {
    release = r;
  });
  ep.script({
    label: "Q1, held",
    reply: (req) => ({ ...answerQuestions(req), stream: { beforeDelta: () => held } }),
  });
  ep.fallback(answerQuestions);
  return release;
}
