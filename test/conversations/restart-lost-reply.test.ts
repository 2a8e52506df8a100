/**
 * Acceptance (issue 20): SIGKILL after the model answered but before its reply was logged. The
 * endpoint has answered a request that ends with the user's message; the next process resumes the
 * turn from the log, which ends with that same message. Its request must extend the answered one
 * (the validating endpoint rejects anything else): the resume note may not be merged into the
 * user's message on the wire. A real Neo process (the conversation worker: the real loop and openai
 * SDK against the validating endpoint, the gate MCP server, the file store) is stopped (SIGSTOP)
 * before it reads the streamed reply, so the reply is sent in full and never logged, then killed.
 */
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RESUME_NOTE } from "../../src/core/conversations/inbound.js";
import type { InboundMessage } from "../../src/core/conversations/types.js";
import {
  type ScriptedOpenAI,
  type ScriptedRequest,
  type ScriptedStream,
  startScriptedOpenAI,
} from "../support/scripted-openai.js";
import { readSaid, startWorker, until, type WorkerProcess } from "./worker-process.js";

const CONV = "console:local:main:lost";

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

const roles = (req: ScriptedRequest) => req.messages.map((m) => m.role);

describe("restart after the model answered, before its reply was logged", () => {
  let ep: ScriptedOpenAI | null = null;
  const workers: WorkerProcess[] = [];
  afterEach(async () => {
    for (const w of workers.splice(0)) if (w.child.exitCode === null) w.child.kill("SIGKILL");
    await ep?.close();
  });

  /**
   * A reply sent whole to a worker that cannot read it: `worker()` is stopped before the one text
   * piece is written. `sent()` tells when the endpoint is done with it (answered, as it counts).
   */
  function unreadReply(worker: () => WorkerProcess) {
    let request: ScriptedRequest | null = null;
    const stream: ScriptedStream = {
      deltas: 1,
      beforeDelta: async () => {
        worker().child.kill("SIGSTOP");
      },
    };
    return {
      reply: (req: ScriptedRequest) => {
        request = req;
        return { text: "this reply is never logged", stream };
      },
      // The piece is written, then the end of the stream in the same tick: answered.
      sent: () => request !== null && request.sent.length === 1,
    };
  }

  async function setup() {
    const dir = mkdtempSync(join(tmpdir(), "neo-lost-reply-"));
    const out = join(dir, "out.jsonl");
    ep = await startScriptedOpenAI([]);
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
    return { dir, out, env, ep, first };
  }

  /** SIGKILL the stopped worker, start the next one, wait for `answer`: the only thing ever said. */
  async function restartAndAnswer(s: Awaited<ReturnType<typeof setup>>, answer: string) {
    s.first.child.kill("SIGKILL");
    await s.first.exited;
    expect(readSaid(s.out).filter((x) => x.kind === "say")).toEqual([]);
    const second = await startWorker(s.env);
    workers.push(second);
    await until("the resumed turn answered", () =>
      readSaid(s.out).some((x) => x.kind === "say" && x.text === answer),
    );
    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
    expect(
      readSaid(s.out)
        .filter((x) => x.kind === "say")
        .map((x) => x.text),
    ).toEqual([answer]);
  }

  it("the reply to the user's message was lost: the resumed request extends the answered one", {
    timeout: 120_000,
  }, async () => {
    const s = await setup();
    const lost = unreadReply(() => s.first);
    s.ep.script(
      {
        label: "answered, never logged",
        expect: (req) => expect(req.messages).toEqual([{ role: "user", content: "what is the status?" }]),
        reply: lost.reply,
      },
      {
        label: "after the restart",
        expect: (req) => {
          expect(roles(req)).toEqual(["user", "assistant", "user"]);
          expect(req.messages[2]?.content).toBe(RESUME_NOTE);
        },
        reply: { text: "All green." },
      },
    );
    expect(await s.first.submit(message("m1", "what is the status?"))).toEqual({ accepted: true });
    await until("the reply was sent in full", lost.sent);
    await restartAndAnswer(s, "All green.");
    expect(s.ep.requests).toHaveLength(2);
  });

  it("the reply after tool results and a queued message was lost: the resumed request extends it", {
    timeout: 120_000,
  }, async () => {
    const s = await setup();
    const lost = unreadReply(() => s.first);
    s.ep.script(
      {
        label: "opens the gate tool",
        reply: { toolCalls: [{ id: "call_gate", name: "gate__wait_for_gate", arguments: { name: "g1" } }] },
      },
      {
        label: "tool result, then the queued message: answered, never logged",
        expect: (req) => expect(roles(req)).toEqual(["user", "assistant", "tool", "user"]),
        reply: lost.reply,
      },
      {
        label: "after the restart",
        expect: (req) => {
          expect(roles(req)).toEqual(["user", "assistant", "tool", "user", "assistant", "user"]);
          expect(req.messages[5]?.content).toBe(RESUME_NOTE);
        },
        reply: { text: "Report read, totals checked." },
      },
    );
    expect(await s.first.submit(message("m1", "read the report"))).toEqual({ accepted: true });
    await until("the tool call is running", () => existsSync(join(s.dir, "g1.started")));
    // Journaled while the tool runs: it joins the turn after the tool result.
    expect(await s.first.submit(message("m2", "also check the totals"))).toEqual({ accepted: true });
    writeFileSync(join(s.dir, "g1.open"), "");
    await until("the reply was sent in full", lost.sent);
    await restartAndAnswer(s, "Report read, totals checked.");
    expect(s.ep.requests).toHaveLength(3);
  });
});
