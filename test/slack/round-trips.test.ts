/**
 * Redis round trips on the way from a Slack event to the model call (issue 20: at most 3; issue 30:
 * at most 2 for a channel and user served before), counted on the wire by the bench's pass-through
 * (`bench/system/redis-wire.ts`: one chunk the client writes without waiting = one round trip). The
 * real Bolt app, conversations layer, memory, loop and openai SDK against the scripted endpoint, over
 * a real Redis. First mentions warm what a busy instance holds: the user's memory view, what the
 * store keeps of the channel and the user (their directory entries, written once when first seen:
 * a never-seen channel's is looked up in the background, not on the answer's path) and the
 * client-side cache of the keys every message reads (channel settings, deny list, directory), which
 * Redis keeps valid by pushing invalidations (src/store/redis-link.ts). The measured one is a new
 * conversation by someone else, and its round trips are the chunks that name its channel or user. */
import { afterEach, describe, expect, it } from "vitest";
import { now } from "../../bench/system/ledger.js";
import { type RedisWire, startRedisWire, type WireChunk } from "../../bench/system/redis-wire.js";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import type { ScriptedRequest } from "../support/scripted-openai.js";
import { envelope, type Harness, mention, startHarness, until } from "./support/harness.js";

const redis = await probeRedis();

const isTurn = (r: ScriptedRequest) => r.purpose === "turn";
const isWriteback = (r: ScriptedRequest) => r.purpose === "writeback";
const NOTHING_LEARNED = JSON.stringify({ conversations: [] });

describe.skipIf(!redis.ok)("Redis round trips per Slack message", () => {
  let h: Harness | null = null;
  let wire: RedisWire | null = null;
  afterEach(async () => {
    await h?.close();
    await wire?.close();
    h = null;
    wire = null;
  });

  it("a mention reaches the model in at most 2 round trips to Redis, is posted after 3 and put away after 4, and sends at most 14 commands in all", async () => {
    const target = new URL(redis.url);
    wire = await startRedisWire({ host: target.hostname, port: Number(target.port || 6379) });
    h = await startHarness({
      memory: true,
      redis: { url: wire.url, prefix: uniquePrefix("round-trips") },
      channels: [
        { id: "C0WARM", name: "warm" },
        { id: "C0MEASURE", name: "measure" },
      ],
    });
    const hh = h;
    const answerAndLearn = async (event: Record<string, unknown>, text: string) => {
      const before = hh.memory!.stats().processed;
      let arrived = 0;
      hh.ep.script(
        {
          label: text,
          match: isTurn,
          expect: () => {
            arrived = now();
          },
          reply: { text },
        },
        { label: `${text}: write-back`, match: isWriteback, reply: { text: NOTHING_LEARNED } },
      );
      const sent = now();
      expect((await hh.slack.event(envelope(event))).status).toBe(200);
      await hh.fake.waitFor(
        () => hh.fake.callsTo("chat.postMessage").some((c) => c.args.text === text),
        text,
      );
      await until("write-back", () => hh.memory!.stats().processed > before);
      await until("idle", () => hh.conversations.stats().running === 0);
      return { sent, arrived, done: now() };
    };

    await answerAndLearn(mention("C0WARM", "UBOB", "hello"), "Hello Bob.");
    // The measured channel's kind is known as on any instance that served it before (the store's
    // directory, places.ts): the measured message is a new conversation there.
    await answerAndLearn(mention("C0MEASURE", "UANN", "a question there"), "Answered there.");
    // The first sightings wrote Bob's and the channel's directory entries, which invalidated them in
    // the client-side cache; one more message each reads them back, as any later message would.
    await answerAndLearn(mention("C0WARM", "UBOB", "and now?"), "Still here, Bob.");
    await answerAndLearn(mention("C0MEASURE", "UANN", "another one"), "Answered again.");
    const { sent, arrived, done } = await answerAndLearn(
      mention("C0MEASURE", "UBOB", "what is the status?"),
      "All green.",
    );

    await wire.flush();
    const ours = wire.chunks.filter((c) => c.at >= sent && c.at < arrived && /C0MEASURE|UBOB/.test(c.names));
    expect(arrived).toBeGreaterThan(sent);
    // Each round trip is listed, so a failure shows what the path asked of Redis.
    expect(ours.map((c) => c.names).length, ours.map((c) => c.names).join("\n")).toBeLessThanOrEqual(2);
    expect(ours.length).toBeGreaterThan(0);

    // Round trips the answer waits for, from the event to the post and until the conversation is
    // put away. The usage counts go beside the answer's write, awaited by nobody: a chunk of those
    // alone is not one. The opening message's log write goes out as the model is asked (before or
    // after its request lands): it is counted here, on the whole path, not split at the model call.
    // Before issue 30: lookups; journal, lease and state; opening write with settings and memory;
    // answer; the post's room; turn end; marker; lease (5 to the post, 8 in all).
    const waited = (c: WireChunk) =>
      /C0MEASURE|UBOB/.test(c.names) && !/^(EVALSHA\([^)]*usage:[^)]*\) ?)+$/.test(c.names);
    const post = hh.fake.callsTo("chat.postMessage").find((c) => c.args.text === "All green.")!;
    // Journal, lease and state (the opening write beside the model call), the answer's write with
    // the post's room in the channel's rate window (asked for beside it, not after it).
    const toPost = wire.chunks.filter((c) => c.at >= sent && c.at <= post.at && waited(c));
    expect(toPost.length, toPost.map((c) => c.names).join("\n")).toBeLessThanOrEqual(3);
    // Then the turn's end with the view checked, the inbox read, and (nothing new in it) the marker
    // cleared and the lease released, all in one command (5 round trips before the release went in it).
    const lastOfConversation = wire.chunks.findLast((c) => /C0MEASURE/.test(c.names))!.at;
    const all = wire.chunks.filter((c) => c.at >= sent && c.at <= lastOfConversation && waited(c));
    expect(all.length, all.map((c) => c.names).join("\n")).toBeLessThanOrEqual(4);

    // Commands, not only round trips: node-redis spends CPU per command (encode, reply, promise).
    // The whole message, from its event until the conversation is put away and its write-back done:
    // the journal, the lease, the reads of conversation and memory, the log appends (each with its
    // look at the inbox in the same command), the usage counts (one step per scope) and the
    // write-back. The lookups (settings twice, deny list, directory: 5 GETs, 26 commands before
    // issue 30) come from the client-side cache. 21 before the appends read the inbox themselves,
    // the acknowledgement took the lease attempt's answer instead of reading the lease and the turn's
    // end released the lease (with the inbox's length) in its own command.
    const whole = wire.chunks.filter((c) => c.at >= sent && c.at <= done && /C0MEASURE|UBOB/.test(c.names));
    const commands = whole.reduce((n, c) => n + c.commands, 0);
    expect(commands, whole.map((c) => `${c.commands}: ${c.names}`).join("\n")).toBeLessThanOrEqual(14);
  });
});
