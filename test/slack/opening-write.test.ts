/**
 * The opening message's log write and the model call go out together (issue 30: nothing on an
 * answer's path waits for what it can do without): the model is asked while the write is in flight,
 * and nothing of its reply is shown before the message it answers is in the log. If that write
 * fails, the turn never began: the reply is not shown, and the message is answered when the thread
 * runs again, once. Real Bolt against the fake Slack, the real conversations layer, loop and openai
 * SDK against the scripted endpoint, over a real Redis; the store is held or failed at the one
 * write by a proxy (as `crash-store.ts` does).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/store/types.js";
import { StoreUnavailableError } from "../../src/store/types.js";
import { logAppendOf } from "../support/crash-store.js";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import type { ScriptedRequest } from "../support/scripted-openai.js";
import { envelope, type Harness, mention, startHarness, until, userTs } from "./support/harness.js";

const redis = await probeRedis();

/** The log append that opens a turn (its entries hold the turn's start). */
const isOpening = logAppendOf("turn-start");

/** A store whose first turn-opening write waits for `release` (or `fail`) before it goes on. */
function holdOpening() {
  let release!: () => void;
  let fail!: (err: Error) => void;
  const gate = new Promise<void>((resolve, reject) => {
    release = resolve;
    fail = reject;
  });
  gate.catch(() => undefined);
  let held = false;
  let reached!: () => void;
  const atWrite = new Promise<void>((r) => {
    reached = r;
  });
  const wrap = (store: Store): Store =>
    new Proxy(store, {
      get(target, prop, receiver) {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          if (!held && isOpening(String(prop), args)) {
            held = true;
            reached();
            return gate.then(() => (value as (...a: unknown[]) => unknown).apply(target, args));
          }
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  return { wrap, atWrite, release: () => release(), fail: (err: Error) => fail(err) };
}

const isTurn = (r: ScriptedRequest) => r.purpose === "turn";

describe.skipIf(!redis.ok)("Slack: the opening message's write and the model call go together", () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it("the model is asked while the write is in flight; the answer is shown only once it landed", async () => {
    const hold = holdOpening();
    h = await startHarness({
      redis: { url: redis.url, prefix: uniquePrefix("opening-write") },
      conversationStore: hold.wrap,
    });
    const hh = h;
    hh.ep.script({ match: isTurn, reply: { text: "Deploys are green." } });
    expect((await hh.slack.event(envelope(mention("C1", "UANN", "how are deploys?")))).status).toBe(200);
    await hold.atWrite;
    // Held at the write, the model call has gone out all the same.
    await until("the model asked", () => hh.ep.requests.some(isTurn));
    // Its reply is in, and not shown: the message it answers is not in the log yet.
    await until("the reply sent", () => hh.ep.requests.some((r) => isTurn(r) && r.status === 200));
    await hh.fake.waitFor(() => hh.ep.requests.filter(isTurn).length === 1, "one model call");
    expect(hh.fake.callsTo("chat.postMessage").map((c) => c.args.text)).not.toContain("Deploys are green.");
    hold.release();
    await hh.fake.waitFor(
      () => hh.fake.callsTo("chat.postMessage").some((c) => c.args.text === "Deploys are green."),
      "the answer",
    );
    await until("idle", () => hh.conversations.stats().running === 0);
    expect(
      hh.fake.callsTo("chat.postMessage").filter((c) => c.args.text === "Deploys are green."),
    ).toHaveLength(1);
  });

  it("a failed write: the reply is never shown, and the message is answered once when the thread runs again", async () => {
    const hold = holdOpening();
    h = await startHarness({
      redis: { url: redis.url, prefix: uniquePrefix("opening-fail") },
      conversationStore: hold.wrap,
    });
    const hh = h;
    hh.ep.script(
      { label: "asked while the write fails", match: isTurn, reply: { text: "An answer never shown." } },
      { label: "asked again", match: isTurn, reply: { text: "Deploys are green." } },
    );
    const ts = userTs();
    expect((await hh.slack.event(envelope(mention("C1", "UANN", "how are deploys?", { ts })))).status).toBe(
      200,
    );
    await hold.atWrite;
    await until("the reply sent", () => hh.ep.requests.some((r) => isTurn(r) && r.status === 200));
    hold.fail(new StoreUnavailableError("the store went away"));
    await until("the pass ended", () => hh.conversations.stats().running === 0);
    // The thread runs again with its next message (the store is back): the first is answered first.
    const reply = {
      type: "message",
      channel: "C1",
      user: "UANN",
      text: "and staging?",
      ts: userTs(),
      thread_ts: ts,
      event_ts: ts,
    };
    expect((await hh.slack.event(envelope(reply))).status).toBe(200);
    await hh.fake.waitFor(
      () => hh.fake.callsTo("chat.postMessage").some((c) => c.args.text === "Deploys are green."),
      "the answer",
    );
    await until("idle", () => hh.conversations.stats().running === 0);
    const texts = hh.fake.callsTo("chat.postMessage").map((c) => c.args.text);
    expect(texts).not.toContain("An answer never shown.");
    expect(texts.filter((t) => t === "Deploys are green.")).toHaveLength(1);
    // The second request carries the first question: it was not lost with the write.
    const second = hh.ep.requests.filter(isTurn)[1]!;
    expect(JSON.stringify(second.messages)).toContain("how are deploys?");
    expect(hh.ep.violations).toEqual([]);
  });
});
