/**
 * A scripted OpenAI-compatible endpoint: a real HTTP server on 127.0.0.1 that the real `openai`
 * SDK talks to (`baseURL: endpoint.url`). Tests script turns: what a request must contain and what
 * to answer. Every request is also validated without being asked (tool call/result pairing, no
 * duplicate messages, content arrays as OpenAI accepts them (text parts; image parts in user messages
 * only, https or a base64 data URL whose bytes are the image type it names), prefix consistency per
 * conversation except across a compaction or for a released image); a violation
 * is answered with HTTP 400 naming the message (the SDK does not retry 400s, so the loop fails at
 * once), recorded in `violations`, and makes `close()` reject, so `afterEach(() => ep.close())`
 * fails the test.
 *
 * Streaming: a request with `stream: true` is answered as OpenAI streams (server-sent events: a role
 * delta, the text in pieces, each tool call as a header delta plus argument pieces, the finish reason,
 * then a usage chunk when `stream_options.include_usage` asks for it, then `[DONE]`). A streamed
 * request that does not ask for usage is a violation. `ScriptedStream` shapes the pieces, paces them,
 * holds a piece until the test lets it go, or cuts the connection mid-answer.
 *
 * Conversations: a request belongs to the conversation named by its `x-neo-conversation` header
 * (the Neo client sends it for every call with a conversation tag) and only `x-neo-purpose: turn`
 * requests are prefix-checked (compaction / write-back calls are one-shot). Requests without the
 * header are checked for pairing and duplicates only. A request that no longer extends the previous
 * one of its conversation is accepted only when its system block carries a later compaction marker
 * (`[compaction N: reason]`, `src/core/compaction/marker.ts`) than that previous request, or when
 * the previous one's answer went unused (`afterUnusedAnswer`: it extends the one before, and keeps
 * every user message of the unused one).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { CONVERSATION_HEADER, PURPOSE_HEADER } from "../../src/core/llm/request-headers.js";
import {
  alternationViolations,
  contentViolations,
  duplicateViolations,
  pairingViolations,
  prefixViolation,
  systemHead,
  systemText,
  type WireMessage,
} from "./transcript-checks.js";

/** One request as the endpoint received it. */
export interface ScriptedRequest {
  /** 1-based arrival order. */
  index: number;
  model: string;
  /** The system block (all system messages joined). */
  system: string;
  /** The system text before the transcript (what a prompt cache reuses first). */
  head: string;
  /** The transcript: every non-system message, as sent. */
  messages: WireMessage[];
  tools: Array<{ type: string; function: { name: string; description?: string; parameters?: unknown } }>;
  conversation: string | null;
  purpose: string | null;
  /** The Authorization header as received (bearer key, or basic credentials from the base URL). */
  authorization: string | null;
  body: Record<string, unknown>;
  /** True once the client closed the connection before the answer (cancellation). */
  aborted: boolean;
  /** HTTP status the endpoint answered with (0 while pending or when aborted). */
  status: number;
  /** Streamed: text pieces sent so far (each `delta.content`). */
  sent: string[];
  /** True when the endpoint cut this streamed answer on purpose (`ScriptedStream.cutAfter`). */
  cut: boolean;
}

/** How a streamed answer is sent (ignored for requests without `stream: true`). */
export interface ScriptedStream {
  /** Pieces the text is sent in (default 3; fewer when the text is shorter). */
  deltas?: number;
  /** Pause between pieces (default 0). */
  intervalMs?: number;
  /** Awaited before piece `i` (0-based) is written: lets a test hold the stream until it saw something. */
  beforeDelta?: (i: number) => Promise<void>;
  /** Close the connection after this many text pieces, without a finish reason (a broken stream). */
  cutAfter?: number;
  /** Send no usage chunk even when asked (servers that ignore `include_usage`). */
  noUsage?: boolean;
}

export interface ScriptedToolCall {
  id?: string;
  name: string;
  /** A JSON string is sent verbatim (so tests can send malformed JSON); objects are stringified. */
  arguments: string | Record<string, unknown>;
}

/** What to answer. */
export type ScriptedReply =
  | {
      kind?: "completion";
      text?: string | null;
      toolCalls?: ScriptedToolCall[];
      /** Default: `tool_calls` when there are tool calls, else `stop`. */
      finishReason?: "stop" | "length" | "tool_calls" | "content_filter";
      /** `cached`: of `prompt`, read from the provider's prompt cache (`prompt_tokens_details.cached_tokens`). */
      usage?: { prompt: number; completion: number; cached?: number };
      model?: string;
      delayMs?: number;
      /** Pieces, pacing and faults of a streamed answer. */
      stream?: ScriptedStream;
    }
  | {
      kind: "error";
      status: number;
      message?: string;
      /** The error body's `code`, as OpenAI sends it (e.g. `context_length_exceeded`). */
      code?: string;
      retryAfterMs?: number;
      delayMs?: number;
    }
  /** Keep the request open until the client aborts it. */
  | { kind: "hang" };

export interface ScriptedTurn {
  /** Which requests this turn answers (default: any). Routes concurrent conversations. */
  match?: (req: ScriptedRequest) => boolean;
  /** Assertions on the request; a throw is a violation naming this turn. */
  expect?: (req: ScriptedRequest) => void;
  reply: ScriptedReply | ((req: ScriptedRequest) => ScriptedReply);
  /** Label used in violation messages. */
  label?: string;
}

export interface ScriptedOpenAI {
  /** Base URL for the SDK (`http://127.0.0.1:port/v1`). */
  url: string;
  requests: ScriptedRequest[];
  violations: string[];
  /** Append turns; each answers the first later request it matches, once. */
  script(...turns: ScriptedTurn[]): void;
  /** Answer every request no scripted turn matches (load tests). */
  fallback(handler: (req: ScriptedRequest) => ScriptedReply): void;
  /** Scripted turns not yet consumed. */
  pending(): number;
  /** Resolves when the n-th request (1-based) has arrived. */
  waitForRequest(n: number): Promise<ScriptedRequest>;
  /** Resolves when request n was aborted by the client. */
  waitForAbort(n: number): Promise<void>;
  /** Throws if any violation was recorded or scripted turns are left unconsumed. */
  verify(): void;
  /** Close the server, then `verify()`. */
  close(): Promise<void>;
}

type Answered = { messages: WireMessage[]; system: string; head: string; index: number };

interface ConvState {
  lastAnswered: Answered | null;
  /** The answered request `lastAnswered` extended (what a request after an unused answer extends). */
  beforeLast: Answered | null;
}

/** Each user message's text as sent (parts joined), to find a message again inside a merged one. */
const userTexts = (messages: WireMessage[]): string[] =>
  messages
    .filter((m) => m.role === "user")
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));

/**
 * A request after one whose answer went unused (its turn never began: the opening message's log
 * write failed while the model was asked) extends the request before that one instead, and still
 * carries every user message of the unused one: nothing the person said is lost. A plain repeat of
 * the unused one stays a violation: a duplicate call looks just the same.
 */
function afterUnusedAnswer(state: ConvState, rec: ScriptedRequest): boolean {
  if (!state.lastAnswered) return false;
  if (JSON.stringify(rec.messages) === JSON.stringify(state.lastAnswered.messages)) return false;
  if (state.beforeLast && prefixViolation(state.beforeLast, rec)) return false;
  const now = userTexts(rec.messages);
  return userTexts(state.lastAnswered.messages).every((t) => now.some((u) => u.includes(t)));
}

let callSeq = 0;

type CompletionReply = Extract<ScriptedReply, { text?: unknown }>;

function completionBody(req: ScriptedRequest, r: CompletionReply) {
  const toolCalls = (r.toolCalls ?? []).map((c) => ({
    id: c.id ?? `call_${++callSeq}`,
    type: "function" as const,
    function: {
      name: c.name,
      arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments),
    },
  }));
  const text = r.text === undefined ? (toolCalls.length ? null : "") : r.text;
  const prompt = r.usage?.prompt ?? Math.ceil(JSON.stringify(req.body).length / 4);
  const completion = r.usage?.completion ?? Math.ceil((text ?? "").length / 4) + toolCalls.length * 10;
  return {
    id: `chatcmpl-${req.index}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: r.model ?? req.model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: text, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) },
        finish_reason: r.finishReason ?? (toolCalls.length ? "tool_calls" : "stop"),
        logprobs: null,
      },
    ],
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      ...(r.usage?.cached === undefined ? {} : { prompt_tokens_details: { cached_tokens: r.usage.cached } }),
    },
  };
}

/** Cut `text` into `n` pieces of nearly equal length (fewer when it is shorter), nothing lost. */
export function pieces(text: string, n: number): string[] {
  const count = Math.max(1, Math.min(n, text.length));
  const size = Math.ceil(text.length / count);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** The server-sent events of a streamed answer, as OpenAI sends them (one `data:` line each). */
function streamChunks(req: ScriptedRequest, r: CompletionReply) {
  const body = completionBody(req, r);
  const choice = body.choices[0]!;
  const base = { id: body.id, object: "chat.completion.chunk", created: body.created, model: body.model };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  });
  const text = choice.message.content ?? "";
  const textPieces = text ? pieces(text, r.stream?.deltas ?? 3) : [];
  const calls = (choice.message.tool_calls ?? []).flatMap((c, index) => [
    chunk({
      tool_calls: [{ index, id: c.id, type: "function", function: { name: c.function.name, arguments: "" } }],
    }),
    ...pieces(c.function.arguments, 2).map((a) =>
      chunk({ tool_calls: [{ index, function: { arguments: a } }] }),
    ),
  ]);
  const asked = (req.body.stream_options as { include_usage?: boolean } | undefined)?.include_usage;
  const usage = asked && !r.stream?.noUsage ? { ...base, choices: [], usage: body.usage } : null;
  return {
    first: chunk({ role: "assistant", content: "" }),
    textPieces,
    toText: (piece: string) => chunk({ content: piece }),
    calls,
    finish: chunk({}, choice.finish_reason),
    usage,
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function header(req: IncomingMessage, name: string): string | null {
  const v = req.headers[name];
  return typeof v === "string" ? v : null;
}

export interface ScriptedOpenAIOptions {
  /**
   * What a protocol problem (pairing, duplicate, prefix) does: `reject` (default) answers 400;
   * `record` only records it in `violations` and answers as scripted (the system bench, where a
   * real model would answer too and the problem is a figure to report, not a test failure).
   */
  onViolation?: "reject" | "record";
}

/** Start a scripted endpoint on 127.0.0.1 (random port). */
export async function startScriptedOpenAI(
  turns: ScriptedTurn[] = [],
  options: ScriptedOpenAIOptions = {},
): Promise<ScriptedOpenAI> {
  const queue: ScriptedTurn[] = [...turns];
  const requests: ScriptedRequest[] = [];
  const violations: string[] = [];
  const convs = new Map<string, ConvState>();
  const arrivalWaiters: Array<{ n: number; resolve: (r: ScriptedRequest) => void }> = [];
  const abortWaiters = new Map<number, Array<() => void>>();
  let fallbackHandler: ((req: ScriptedRequest) => ScriptedReply) | null = null;

  const send = (res: ServerResponse, rec: ScriptedRequest, status: number, body: unknown, extra = {}) => {
    rec.status = status;
    res.writeHead(status, { "content-type": "application/json", ...extra });
    res.end(JSON.stringify(body));
  };
  const reject = (res: ServerResponse, rec: ScriptedRequest, problem: string) => {
    violations.push(`request #${rec.index}: ${problem}`);
    send(res, rec, 400, {
      error: { message: `scripted endpoint: ${problem}`, type: "invalid_request_error" },
    });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const raw = await readBody(req);
    const body = JSON.parse(raw) as Record<string, unknown>;
    const all = (body.messages ?? []) as WireMessage[];
    const rec: ScriptedRequest = {
      index: requests.length + 1,
      model: String(body.model),
      system: systemText(all),
      head: systemHead(all),
      messages: all.filter((m) => m.role !== "system" && m.role !== "developer"),
      tools: (body.tools ?? []) as ScriptedRequest["tools"],
      conversation: header(req, CONVERSATION_HEADER),
      purpose: header(req, PURPOSE_HEADER),
      authorization: header(req, "authorization"),
      body,
      aborted: false,
      status: 0,
      sent: [],
      cut: false,
    };
    requests.push(rec);
    res.on("close", () => {
      if (res.writableFinished || rec.cut) return;
      rec.aborted = true;
      for (const w of abortWaiters.get(rec.index) ?? []) w();
    });
    for (const w of arrivalWaiters.filter((w) => w.n <= rec.index)) {
      arrivalWaiters.splice(arrivalWaiters.indexOf(w), 1);
      w.resolve(requests[w.n - 1]!);
    }

    const problems = [
      ...alternationViolations(rec.messages),
      ...contentViolations(all),
      ...pairingViolations(rec.messages),
      ...duplicateViolations(rec.messages),
    ];
    const streamOptions = body.stream_options as { include_usage?: unknown } | undefined;
    if (body.stream === true && streamOptions?.include_usage !== true) {
      problems.push("streamed request without stream_options.include_usage: its usage would be lost");
    }
    const conv = rec.conversation && rec.purpose === "turn" ? rec.conversation : null;
    const state = conv ? (convs.get(conv) ?? { lastAnswered: null, beforeLast: null }) : null;
    let retried = false;
    if (conv && state) {
      convs.set(conv, state);
      const p = state.lastAnswered ? prefixViolation(state.lastAnswered, rec) : null;
      retried = p !== null && afterUnusedAnswer(state, rec);
      if (p && !retried) problems.push(p);
    }
    if (problems.length && options.onViolation === "record") {
      violations.push(`request #${rec.index}: ${problems.join("; ")}`);
    } else if (problems.length) return reject(res, rec, problems.join("; "));

    const at = queue.findIndex((t) => !t.match || t.match(rec));
    const turn = at >= 0 ? queue.splice(at, 1)[0]! : null;
    if (!turn && !fallbackHandler) return reject(res, rec, "no scripted turn matches this request");
    if (turn?.expect) {
      try {
        turn.expect(rec);
      } catch (e) {
        return reject(res, rec, `expectation of turn ${turn.label ?? ""} failed: ${(e as Error).message}`);
      }
    }
    const spec = turn ? turn.reply : fallbackHandler!;
    const reply = typeof spec === "function" ? spec(rec) : spec;
    if (reply.kind === "hang") return; // answered only by the client's abort
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    if (rec.aborted) return;
    if (reply.kind === "error") {
      const extra = reply.retryAfterMs !== undefined ? { "retry-after-ms": String(reply.retryAfterMs) } : {};
      return send(
        res,
        rec,
        reply.status,
        {
          error: {
            message: reply.message ?? `scripted HTTP ${reply.status}`,
            type: reply.status >= 500 ? "server_error" : "invalid_request_error",
            ...(reply.code ? { code: reply.code } : {}),
          },
        },
        extra,
      );
    }
    const answered = () => {
      if (state) {
        if (!retried) state.beforeLast = state.lastAnswered;
        state.lastAnswered = { messages: rec.messages, system: rec.system, head: rec.head, index: rec.index };
      }
    };
    if (body.stream !== true) {
      answered();
      return send(res, rec, 200, completionBody(rec, reply));
    }
    await sendStream(res, rec, reply, answered);
  };

  /** Write a streamed answer; a cut one is never "answered" (the retry may repeat the request). */
  const sendStream = async (
    res: ServerResponse,
    rec: ScriptedRequest,
    r: CompletionReply,
    answered: () => void,
  ) => {
    const s = streamChunks(rec, r);
    const opts = r.stream ?? {};
    rec.status = 200;
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const write = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
    write(s.first);
    for (const [i, piece] of s.textPieces.entries()) {
      if (i > 0 && opts.intervalMs) await new Promise((done) => setTimeout(done, opts.intervalMs));
      await opts.beforeDelta?.(i);
      if (rec.aborted) return;
      if (opts.cutAfter !== undefined && i >= opts.cutAfter) {
        // What was written reaches the client first, then the connection ends mid-body.
        rec.cut = true;
        await new Promise<void>((flushed) => res.write("", () => flushed()));
        res.destroy();
        return;
      }
      write(s.toText(piece));
      rec.sent.push(piece);
    }
    for (const c of s.calls) write(c);
    write(s.finish);
    if (s.usage) write(s.usage);
    res.write("data: [DONE]\n\n");
    answered();
    res.end();
  };

  const server: Server = createServer((req, res) => {
    // The model list, as OpenAI serves it: Neo's /healthz probes it for reachability.
    if (req.method === "GET" && req.url?.endsWith("/models")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ object: "list", data: [{ id: "main-model", object: "model", owned_by: "test" }] }),
      );
      return;
    }
    handle(req, res).catch((e: unknown) => {
      violations.push(`endpoint error: ${(e as Error).message}`);
      if (!res.headersSent) res.writeHead(400).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  const verify = () => {
    const left = queue.map((t, i) => t.label ?? `#${i + 1}`);
    const all = [...violations, ...(left.length ? [`unconsumed scripted turns: ${left.join(", ")}`] : [])];
    if (all.length) throw new Error(`scripted endpoint violations:\n${all.join("\n")}`);
  };

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    violations,
    script: (...more) => queue.push(...more),
    fallback: (h) => {
      fallbackHandler = h;
    },
    pending: () => queue.length,
    waitForRequest: (n) =>
      requests[n - 1]
        ? Promise.resolve(requests[n - 1]!)
        : new Promise((resolve) => arrivalWaiters.push({ n, resolve })),
    waitForAbort: (n) =>
      requests[n - 1]?.aborted
        ? Promise.resolve()
        : new Promise((resolve) => abortWaiters.set(n, [...(abortWaiters.get(n) ?? []), resolve])),
    verify,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      verify();
    },
  };
}
