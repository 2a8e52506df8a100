/**
 * Acceptance: SIGKILL in the middle of a tool call, restart, and the conversation resumes: the
 * orphaned call gets its synthetic result, the user gets one answer, nothing is lost or duplicated,
 * and the model's next request is a strict extension of the one before the crash.
 */
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RESUME_NOTE } from "../../src/core/conversations/inbound.js";
import { INTERRUPTED_TOOL_RESULT } from "../../src/core/conversations/replay.js";
import type { InboundMessage } from "../../src/core/conversations/types.js";
import { USER_MESSAGE_JOIN } from "../../src/core/llm/wire.js";
import {
  type ScriptedOpenAI,
  type ScriptedRequest,
  startScriptedOpenAI,
} from "../support/scripted-openai.js";
import { readSaid, startWorker, until, type WorkerProcess } from "./worker-process.js";

const CONV = "console:local:main:t1";

function message(id: string, text: string): InboundMessage {
  return {
    id,
    conversation: CONV,
    speaker: { userKey: "console:local:ann", displayName: "Ann" },
    text,
    shared: false,
    place: { kind: "dm", workspace: "local" },
    receivedAt: Date.now(),
  };
}

/** User messages after the last assistant message: what the model is answering now. */
function newUserTexts(req: ScriptedRequest): string[] {
  const out: string[] = [];
  for (let i = req.messages.length - 1; i >= 0 && req.messages[i]!.role !== "assistant"; i--) {
    const m = req.messages[i]!;
    // The request builder sends a run of user messages as one, texts separated by a blank line.
    if (m.role === "user") out.unshift(...String(m.content).split(USER_MESSAGE_JOIN));
  }
  return out;
}

describe("restart after SIGKILL mid tool call", () => {
  let ep: ScriptedOpenAI | null = null;
  const workers: WorkerProcess[] = [];
  afterEach(async () => {
    for (const w of workers.splice(0)) if (w.child.exitCode === null) w.child.kill("SIGKILL");
    await ep?.close();
  });

  it("resumes the turn with a synthetic result and answers exactly once", { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "neo-restart-"));
    const out = join(dir, "out.jsonl");
    ep = await startScriptedOpenAI([
      {
        label: "opens the gate tool",
        expect: (req) => expect(newUserTexts(req)).toEqual(["read the report"]),
        reply: { toolCalls: [{ id: "call_gate", name: "gate__wait_for_gate", arguments: { name: "g1" } }] },
      },
      {
        label: "after restart: synthetic result, then the resume note",
        expect: (req) => {
          const tool = req.messages.find((m) => m.role === "tool");
          expect(tool?.content).toBe(INTERRUPTED_TOOL_RESULT);
        },
        reply: (req) => ({ text: `answered: ${newUserTexts(req).join(" | ")}` }),
      },
    ]);
    ep.fallback((req) => ({ text: `answered: ${newUserTexts(req).join(" | ")}` }));
    const env = {
      WORKER_OUT: out,
      WORKER_INSTANCE_ID: "solo",
      WORKER_DATA_DIR: join(dir, "data"),
      WORKER_PREFIX: "neo:",
      WORKER_ENDPOINT_URL: ep.url,
      WORKER_GATE_DIR: dir,
    };

    const first = await startWorker(env);
    workers.push(first);
    expect(await first.submit(message("m1", "read the report"))).toEqual({ accepted: true });
    await until("the tool call is running", () => existsSync(join(dir, "g1.started")));
    // Journaled while the turn is stuck in the tool call: it must survive the kill.
    expect(await first.submit(message("m2", "also check the totals"))).toEqual({ accepted: true });
    first.child.kill("SIGKILL");
    await first.exited;
    expect(readSaid(out).filter((s) => s.kind === "say")).toEqual([]);

    const second = await startWorker(env);
    workers.push(second);
    // A retried delivery of an already journaled message changes nothing.
    expect(await second.submit(message("m1", "read the report"))).toEqual({
      accepted: false,
      reason: "duplicate",
    });
    await until("every message answered", () => {
      const said = readSaid(out)
        .filter((s) => s.kind === "say")
        .map((s) => s.text)
        .join("\n");
      return said.includes("also check the totals") && said.includes(RESUME_NOTE);
    });
    writeFileSync(join(dir, "g1.open"), "");
    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);

    const says = readSaid(out).filter((s) => s.kind === "say");
    const answeredTexts = says.flatMap((s) => s.text.replace(/^answered: /, "").split(" | "));
    // m1's turn resumed and finished (the model answered the resume note) exactly once; m2 is
    // answered exactly once, in that turn or its own.
    expect(answeredTexts.filter((t) => t === RESUME_NOTE)).toHaveLength(1);
    expect(answeredTexts.filter((t) => t === "also check the totals")).toHaveLength(1);
    expect(says.length).toBeLessThanOrEqual(2);
    expect(answeredTexts.filter((t) => t === "read the report")).toHaveLength(0);
    expect(says.every((s) => s.pid === second.child.pid)).toBe(true);
    // m1 reached the model exactly once, before the crash.
    const m1Requests = ep.requests.filter((r) => newUserTexts(r).includes("read the report"));
    expect(m1Requests).toHaveLength(1);
  });
});
