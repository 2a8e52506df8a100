/**
 * The remote executor: a client for an async intent pipeline (`NEO_EXECUTOR_URL`). Submit an intent,
 * poll until it awaits approval with a plan, send the decision, poll to a final outcome. Every
 * request has a timeout, transient failures (network, 429, 5xx) are retried a bounded number of
 * times with the same Idempotency-Key, and every answer is zod-validated: a malformed answer is a
 * clear `RemoteExecutorError`, and nothing is approved on its basis.
 */
import { randomUUID } from "node:crypto";
import type { z } from "zod";
import type { Speaker } from "../keys.js";
import type { ToolCallContext } from "../tools/types.js";
import { summarise } from "./embedded-executor.js";
import { PlanMismatchError, RemoteExecutorError } from "./errors.js";
import type { Executor } from "./executor.js";
import { canonicalJson } from "./plan-hash.js";
import { accepted, type IntentState, intentState } from "./remote-contract.js";
import { extractSpend, type SpendRules } from "./spend.js";
import { extractTxIds } from "./tx-ids.js";
import type { Outcome, Plan, PlannedAction } from "./types.js";

export interface RemoteExecutorOptions {
  /** Base URL of the pipeline (`NEO_EXECUTOR_URL`). */
  url: string;
  /** Declared spend rules per tool (`NEO_SPEND_RULES`), for actions the pipeline gives no spend. */
  spendRules?: SpendRules;
  /** Per HTTP request. Default 10 s. */
  timeoutMs?: number;
  /** Retries of one request after a transient failure. Default 2. */
  retries?: number;
  /** Status poll interval. Default 1 s. */
  pollMs?: number;
  /** How long planning may take before giving up. Default 2 min. */
  planTimeoutMs?: number;
  /** How long execution may take after approval before giving up. Default 5 min. */
  executeTimeoutMs?: number;
}

const TRANSIENT = new Set([408, 425, 429, 500, 502, 503, 504]);

function wait(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

export function createRemoteExecutor(opts: RemoteExecutorOptions): Executor {
  const base = opts.url.replace(/\/+$/, "");
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const retries = opts.retries ?? 2;
  const pollMs = opts.pollMs ?? 1000;
  const planTimeoutMs = opts.planTimeoutMs ?? 120_000;
  const executeTimeoutMs = opts.executeTimeoutMs ?? 300_000;

  async function call<S extends z.ZodType>(
    method: "GET" | "POST",
    path: string,
    schema: S,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<z.infer<S>> {
    const idempotencyKey = randomUUID();
    let last = "";
    for (let attempt = 0; attempt <= retries; attempt++) {
      if (attempt > 0) await wait(Math.min(200 * 2 ** (attempt - 1), 2000), signal);
      if (signal?.aborted)
        throw new RemoteExecutorError("REMOTE_FAILED", "cancelled before the pipeline answered");
      let res: Response;
      try {
        const timeout = AbortSignal.timeout(timeoutMs);
        res = await fetch(`${base}${path}`, {
          method,
          headers: {
            accept: "application/json",
            ...(body === undefined ? {} : { "content-type": "application/json" }),
            ...(method === "POST" ? { "idempotency-key": idempotencyKey } : {}),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: signal ? AbortSignal.any([timeout, signal]) : timeout,
        });
      } catch (err) {
        const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
        last = timedOut ? `no answer within ${timeoutMs} ms` : `unreachable (${String(err)})`;
        continue;
      }
      if (TRANSIENT.has(res.status)) {
        last = `HTTP ${res.status}`;
        await res.body?.cancel();
        continue;
      }
      const text = await res.text();
      if (!res.ok) {
        throw new RemoteExecutorError(
          "REMOTE_HTTP",
          `${method} ${path} answered HTTP ${res.status}: ${text.slice(0, 300)}`,
        );
      }
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw new RemoteExecutorError(
          "REMOTE_MALFORMED",
          `${method} ${path} answered non-JSON: ${text.slice(0, 200)}`,
        );
      }
      const parsed = schema.safeParse(json);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        throw new RemoteExecutorError(
          "REMOTE_MALFORMED",
          `${method} ${path} answered an unexpected shape (${issue.path.join(".") || "body"}: ${issue.message})`,
        );
      }
      return parsed.data;
    }
    throw new RemoteExecutorError(
      last.startsWith("no answer") ? "REMOTE_TIMEOUT" : "REMOTE_FAILED",
      `${method} ${path} failed after ${retries + 1} attempts: ${last}`,
    );
  }

  /** Poll until `done(state)` or the deadline. */
  async function pollUntil(
    id: string,
    deadlineMs: number,
    done: (s: IntentState) => boolean,
    signal?: AbortSignal,
  ): Promise<IntentState> {
    const deadline = Date.now() + deadlineMs;
    for (;;) {
      const state = await call("GET", `/intents/${encodeURIComponent(id)}`, intentState, undefined, signal);
      if (state.id !== id) {
        throw new RemoteExecutorError(
          "REMOTE_MALFORMED",
          `asked for intent ${id}, the pipeline answered ${state.id}`,
        );
      }
      if (done(state)) return state;
      if (Date.now() >= deadline) {
        throw new RemoteExecutorError(
          "REMOTE_TIMEOUT",
          `intent ${id} still "${state.status}" after ${deadlineMs} ms`,
        );
      }
      await wait(pollMs, signal);
      if (signal?.aborted)
        throw new RemoteExecutorError("REMOTE_FAILED", "cancelled while waiting for the pipeline");
    }
  }

  function toActions(state: IntentState): PlannedAction[] {
    return state.plan!.actions.map((a) => ({
      tool: a.tool,
      arguments: a.arguments,
      // Trust the pipeline's declared spend; when it declares none, read it from the arguments.
      spend: a.spend ?? extractSpend(a.arguments, opts.spendRules?.[a.tool]),
    }));
  }

  async function plan(intent: string, requester: Speaker, ctx: ToolCallContext): Promise<Plan> {
    const body = { intent, requester, conversation: ctx.conversation };
    const submitted = await call("POST", "/intents", accepted, body, ctx.signal);
    const state = await pollUntil(submitted.id, planTimeoutMs, (s) => s.status !== "planning", ctx.signal);
    if (state.status === "failed") {
      throw new RemoteExecutorError(
        "REMOTE_FAILED",
        `the pipeline could not plan this: ${state.error ?? "no reason given"}`,
      );
    }
    if (state.status !== "awaiting_approval" || !state.plan) {
      throw new RemoteExecutorError(
        "REMOTE_MALFORMED",
        `the pipeline answered "${state.status}"${state.plan ? "" : " without a plan"} instead of awaiting approval`,
      );
    }
    const actions = toActions(state);
    const planned: Plan = {
      id: state.id,
      intent,
      summary: state.plan.summary || summarise(actions),
      actions,
      requester: requester.userKey,
      createdAt: Date.now(),
    };
    return planned;
  }

  async function execute(approved: Plan, ctx: ToolCallContext): Promise<Outcome> {
    const planId = approved.id;
    // The pipeline holds the plan: read it back and approve only if its actions are, byte for byte,
    // the actions the requester was shown.
    const current = await call(
      "GET",
      `/intents/${encodeURIComponent(planId)}`,
      intentState,
      undefined,
      ctx.signal,
    );
    if (
      current.status !== "awaiting_approval" ||
      !current.plan ||
      canonicalJson(toActions(current)) !== canonicalJson(approved.actions)
    ) {
      throw new PlanMismatchError(planId);
    }
    const path = `/intents/${encodeURIComponent(planId)}/decision`;
    await call("POST", path, accepted, { decision: "approve" }, ctx.signal);
    const final = new Set(["succeeded", "failed", "rejected", "expired"]);
    const state = await pollUntil(planId, executeTimeoutMs, (s) => final.has(s.status), ctx.signal);
    if (!state.outcome) {
      throw new RemoteExecutorError(
        state.status === "succeeded" ? "REMOTE_MALFORMED" : "REMOTE_FAILED",
        `intent ${planId} ended "${state.status}" without an outcome${state.error ? `: ${state.error}` : ""}`,
      );
    }
    const o = state.outcome;
    const txIds = o.txIds ?? [
      ...new Set(o.results.filter((r) => !r.isError).flatMap((r) => extractTxIds(r.content))),
    ];
    const notRun = o.notRun.map((a) => ({ tool: a.tool, arguments: a.arguments, spend: a.spend ?? null }));
    return { status: o.status, results: o.results, notRun, txIds };
  }

  async function discard(planId: string): Promise<void> {
    await call("POST", `/intents/${encodeURIComponent(planId)}/decision`, accepted, { decision: "reject" });
  }

  return { kind: "remote", plan, execute, discard };
}
