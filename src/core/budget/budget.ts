/**
 * The context budget (seed: budgetPct): system + messages (+4 tokens per message, tool calls
 * included) + tool schemas, as a percentage of the context window. Per-message and per-schema
 * estimates are cached on the (immutable) objects, and recent system blocks by their text, so a step
 * re-estimates only what is new.
 */
import type { Message, ToolSchema } from "../llm/types.js";
import { estimateResumable, estimateTokens } from "./estimate.js";

/** Framing tokens each message costs beyond its content. */
export const PER_MESSAGE_OVERHEAD = 4;

const messageCache = new WeakMap<Message, number>();
const schemaCache = new WeakMap<ToolSchema, number>();

/**
 * Content + tool calls of one message, plus its framing. The text of a file in a user message was
 * counted by the real tokenizer when it was read: where that count is above the estimate (scripts
 * the estimator prices low, such as CJK, Yi or emoji), the difference is added.
 */
export function messageTokens(m: Message): number {
  const cached = messageCache.get(m);
  if (cached !== undefined) return cached;
  let n = PER_MESSAGE_OVERHEAD + estimateTokens(m.content ?? "");
  if (m.role === "user") {
    for (const f of m.files ?? []) n += Math.max(0, (f.tokens ?? 0) - (f.estimated ?? 0));
  }
  if (m.role === "assistant") {
    for (const c of m.tool_calls ?? [])
      n += estimateTokens(c.function.name) + estimateTokens(c.function.arguments) + 3;
  }
  messageCache.set(m, n);
  return n;
}

/**
 * Each array's sum so far: how many messages it covered and the last of them. A transcript's working
 * array only grows (a compaction replaces it), and is measured before and after every model call,
 * so a sum resumes where it stopped instead of walking the whole window again. An array whose last
 * counted message is no longer in its place is summed afresh.
 */
const sumCache = new WeakMap<readonly Message[], { count: number; last: Message; sum: number }>();

export function messagesTokens(messages: readonly Message[]): number {
  const prior = sumCache.get(messages);
  let from = 0;
  let n = 0;
  if (prior && prior.count <= messages.length && messages[prior.count - 1] === prior.last) {
    from = prior.count;
    n = prior.sum;
  }
  for (let i = from; i < messages.length; i++) n += messageTokens(messages[i]!);
  if (messages.length > 0) sumCache.set(messages, { count: messages.length, last: messages.at(-1)!, sum: n });
  return n;
}

/** The JSON-serialised schema size: a fixed overhead paid on every request. */
export function schemaTokens(schemas: readonly ToolSchema[]): number {
  let n = 0;
  for (const s of schemas) {
    let t = schemaCache.get(s);
    if (t === undefined) {
      t = estimateTokens(JSON.stringify(s));
      schemaCache.set(s, t);
    }
    n += t;
  }
  return n;
}

export interface BudgetInput {
  system: string;
  messages: readonly Message[];
  tools: readonly ToolSchema[];
  contextWindow: number;
}

/**
 * Recent system blocks' estimates, by their text: a turn measures its block before the model call
 * and again after the answer, mostly unchanged (a few KB each time, otherwise the loop's largest
 * cost of its own per message). Oldest dropped first.
 */
const systemCache = new Map<string, number>();
const SYSTEM_CACHE_SIZE = 32;

/**
 * The last block estimated and where its estimate may resume ([position, tokens] pairs, one per
 * RESUME_STRIDE characters). Every block starts with the same head (charter, ground truth), so a new
 * block is estimated from the furthest point whose text it shares, not from its start.
 */
let lastSystem: { text: string; marks: number[] } | undefined;

/**
 * Index (in pairs) of the furthest mark of `last` whose text, its own character included, `text`
 * shares; -1 for none. Compared a stretch at a time by `startsWith`: native, where a loop over the
 * characters would run a message's only pass in the interpreter.
 */
function sharedMark(last: { text: string; marks: number[] }, text: string): number {
  const { text: prev, marks } = last;
  let k = -1;
  let from = 0;
  for (let j = 0; j < marks.length; j += 2) {
    const to = marks[j]! + 1;
    if (!text.startsWith(prev.slice(from, to), from)) break;
    k = j / 2;
    from = to;
  }
  return k;
}

function systemTokens(system: string): number {
  const cached = systemCache.get(system);
  if (cached !== undefined) return cached;
  let marks: number[] = [];
  let from = 0;
  let counted = 0;
  const k = lastSystem ? sharedMark(lastSystem, system) : -1;
  if (lastSystem && k >= 0) {
    // Resumed at mark k, which the scan notes again.
    marks = lastSystem.marks.slice(0, 2 * k);
    from = lastSystem.marks[2 * k]!;
    counted = lastSystem.marks[2 * k + 1]!;
  }
  const n = estimateResumable(system, from, counted, marks);
  lastSystem = { text: system, marks };
  if (systemCache.size >= SYSTEM_CACHE_SIZE) systemCache.delete(systemCache.keys().next().value!);
  systemCache.set(system, n);
  return n;
}

/** Estimated tokens of one request. */
export function requestTokens(b: Omit<BudgetInput, "contextWindow">): number {
  return systemTokens(b.system) + PER_MESSAGE_OVERHEAD + messagesTokens(b.messages) + schemaTokens(b.tools);
}

/** Whole percent of the window the request uses (floor, as the seed's integer math). */
export function budgetPct(b: BudgetInput): number {
  return Math.floor((requestTokens(b) * 100) / b.contextWindow);
}
