/**
 * The model the bot under test talks to: the scripted OpenAI endpoint (test/support) answering every
 * request from a fallback. A turn answers with one `ACK-<token>` per user message it has not answered
 * yet (so a merged or resumed turn still answers each message once, and the drivers can count
 * answers per message). Knobs: latency, an optional MCP tool call before answering, and a fault
 * window during which every request gets 429, 500 or no answer at all (timeout), in rotation.
 */

import {
  type ScriptedOpenAI,
  type ScriptedReply,
  type ScriptedRequest,
  startScriptedOpenAI,
} from "../../test/support/scripted-openai.js";
import type { WireMessage } from "../../test/support/transcript-checks.js";

/** A user message carries `Q-<token>`; the answer says `ACK-<token>`. Tokens are [a-z0-9]. */
export const question = (token: string, words = "what is the status") => `${words}? Q-${token}`;
export const ANSWER_RE = /ACK-([a-z0-9]+)/g;

export type FaultKind = "429" | "500" | "timeout";

export interface BenchModel {
  ep: ScriptedOpenAI;
  url: string;
  /** Latency of every answer (ms). */
  latencyMs: number;
  /** Tool each turn calls once before answering (`alias__name`), or null for none. */
  tool: string | null;
  /** Which turns call `tool`, by the tokens they answer (default: all). */
  toolWhen: (token: string) => boolean;
  /** Until this time (epoch ms) every request fails. */
  faultUntil: number;
  /** Requests answered with a fault, by kind. */
  faults: Record<FaultKind, number>;
  /** Times (epoch ms) at which a tool result that was a success / an error reached the model. */
  toolOk: number[];
  toolFailed: number[];
  /** When the first turn request answering each token reached the endpoint (epoch ms). */
  arrivals: Map<string, number>;
  /** Requests the endpoint found inconsistent (answered anyway; see `startScriptedOpenAI`). */
  violations(): string[];
  close(): Promise<void>;
}

const text = (m: WireMessage): string =>
  typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? "");

/** Tokens of the user messages after the last assistant answer (tool-call messages don't count). */
export function unansweredTokens(messages: readonly WireMessage[]): string[] {
  const tokens: string[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === "assistant" && !m.tool_calls?.length && text(m).length > 0) break;
    if (m.role !== "user") continue;
    for (const hit of text(m).matchAll(/Q-([a-z0-9]+)/g)) tokens.unshift(hit[1]!);
  }
  return [...new Set(tokens)];
}

export async function startBenchModel(latencyMs: number): Promise<BenchModel> {
  const ep = await startScriptedOpenAI([], { onViolation: "record" });
  let rotation = 0;
  const model: BenchModel = {
    ep,
    url: ep.url,
    latencyMs,
    tool: null,
    toolWhen: () => true,
    faultUntil: 0,
    faults: { "429": 0, "500": 0, timeout: 0 },
    toolOk: [],
    toolFailed: [],
    arrivals: new Map(),
    violations: () => ep.violations,
    close: () => ep.close().catch(() => undefined),
  };
  const reply = (req: ScriptedRequest): ScriptedReply => {
    const delayMs = model.latencyMs;
    if (Date.now() < model.faultUntil) {
      const kind = (["429", "500", "timeout"] as const)[rotation++ % 3]!;
      model.faults[kind]++;
      if (kind === "timeout") return { kind: "hang" };
      return {
        kind: "error",
        status: Number(kind),
        delayMs,
        ...(kind === "429" ? { retryAfterMs: 500 } : {}),
      };
    }
    if (req.purpose === "writeback") {
      return { text: '{"conversations":[]}', delayMs };
    }
    // No purpose header: the overhead bench's bare Bolt + model baseline, asking as a turn would.
    if (req.purpose !== null && req.purpose !== "turn")
      return { text: "Summary: a benchmark conversation.", delayMs };
    const last = req.messages.at(-1);
    if (last?.role === "tool") {
      // The fixture (test/fixtures/mcp/paged.ts) answers "called <tool>"; anything else is a failure.
      const ok = /\bcalled page_/.test(text(last));
      (ok ? model.toolOk : model.toolFailed).push(Date.now());
    }
    const tokens = unansweredTokens(req.messages);
    const at = performance.timeOrigin + performance.now();
    for (const t of tokens) if (!model.arrivals.has(t)) model.arrivals.set(t, at);
    const offered = model.tool !== null && req.tools.some((t) => t.function.name === model.tool);
    if (offered && last?.role === "user" && tokens.some(model.toolWhen)) {
      return { toolCalls: [{ name: model.tool!, arguments: {} }], delayMs };
    }
    const body = tokens.length ? tokens.map((t) => `ACK-${t}`).join(" ") : "Nothing new to answer.";
    return { text: `Done. ${body}`, delayMs };
  };
  ep.fallback(reply);
  return model;
}
