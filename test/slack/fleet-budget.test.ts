/**
 * Slack's per-channel post pacing is spent by the whole fleet: three instances (each its own rate
 * gate and store connection to one Redis, as createSlackWorkspaces makes them) post a burst of 150
 * messages into 5 channels of one workspace, and the fake Slack, which counts every client's calls
 * per window and refuses beyond the tier, refuses nothing. A 429 one instance sees holds the key for
 * the others.
 */
import { WebClient } from "@slack/web-api";
import { afterEach, describe, expect, it } from "vitest";
import { SLACK_RATE_RULES } from "../../src/adapters/slack/outbound/rules.js";
import { createSlackOutbound, type SlackOutbound } from "../../src/adapters/slack/outbound.js";
import { createRateGate } from "../../src/adapters/slack/rate-gate.js";
import { rateBudgetKey } from "../../src/core/keys.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/types.js";
import { type FakeSlack, startFakeSlack } from "../fakes/slack/fake-slack.js";
import { until } from "../memory/support/redis-server.js";
import { probeRedis, uniquePrefix } from "../support/redis.js";

const redis = await probeRedis();
/** Slack's shape (a few posts per channel in a short window), its window shortened for the test. */
const PACE = { limit: 3, windowMs: 300 };
const CHANNELS = ["C1", "C2", "C3", "C4", "C5"];

describe.skipIf(!redis.ok)("Slack: one rate budget for three instances", () => {
  let fake: FakeSlack | undefined;
  const stores: Store[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    await fake?.close();
  });

  const instances = async (f: FakeSlack): Promise<SlackOutbound[]> => {
    const prefix = uniquePrefix("slack-budget");
    const outs: SlackOutbound[] = [];
    for (let i = 0; i < 3; i++) {
      const store = await createStore({ redisUrl: redis.url, dataDir: "unused", prefix });
      stores.push(store);
      const client = new WebClient("xoxb-test-token", {
        slackApiUrl: f.apiUrl,
        retryConfig: { retries: 0 },
        rejectRateLimitedCalls: true,
      });
      outs.push(
        createSlackOutbound(client, {
          rules: { ...SLACK_RATE_RULES, postPerChannel: PACE },
          gate: createRateGate({ store }),
          team: f.teamId,
          token: async () => "xoxb-test-token",
        }),
      );
    }
    return outs;
  };

  it("150 posts into 5 channels from 3 instances: no channel's window over its limit, nothing refused", async () => {
    fake = await startFakeSlack({
      channels: CHANNELS.map((id) => ({ id, name: id.toLowerCase() })),
      tiers: { "chat.postMessage": { ...PACE, scope: "channel" } },
    });
    const outs = await instances(fake);
    await Promise.all(
      outs.flatMap((out, i) =>
        Array.from({ length: 50 }, (_, j) =>
          out.post({ channel: CHANNELS[j % 5]!, text: `instance ${i} #${j}` }),
        ),
      ),
    );
    expect(fake.violations()).toEqual([]);
    for (const c of CHANNELS) expect(fake.messages(c)).toHaveLength(30);
  });

  it("a 429 seen by one instance holds the key for the others until its Retry-After ends", async () => {
    fake = await startFakeSlack({ channels: [{ id: "C1", name: "c1" }] });
    const [a, b] = await instances(fake);
    fake.inject429("chat.postMessage", 1, 1);
    const first = a!.post({ channel: "C1", text: "first" });
    await fake.waitFor(() => fake!.calls.some((c) => c.status === 429), "the 429");
    // Once a has written the block (a probe that finds room gives it straight back).
    const key = rateBudgetKey("slack", fake.teamId, "chat.postMessage", "C1");
    const windowMs = Math.ceil(PACE.windowMs * 1.1);
    await until(async () => {
      const wait = await stores[2]!.rateWindow(key, {
        op: "take",
        id: "probe",
        limit: 100,
        windowMs,
        yields: true,
      });
      if (wait === 0) await stores[2]!.rateWindow(key, { op: "release", id: "probe", windowMs });
      return wait > 0;
    });
    const limited = fake.calls.find((c) => c.status === 429)!;
    // b's own gate has seen nothing; the fleet's window holds it.
    await b!.post({ channel: "C1", text: "second" });
    await first;
    const fromB = fake.calls.find((c) => c.args.text === "second" && c.status === 200)!;
    expect(fromB.at - limited.at).toBeGreaterThanOrEqual(900);
    expect(
      fake
        .messages("C1")
        .map((m) => m.text)
        .sort(),
    ).toEqual(["first", "second"]);
  });
});
