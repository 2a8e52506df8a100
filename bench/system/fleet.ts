/**
 * One phase of the fleet bench (issue 31 item 5): `instances` REAL Neo processes (distinct
 * NEO_INSTANCE_ID / NEO_HTTP_PORT / NEO_METRICS_PORT) on one store — the shared Redis on
 * 127.0.0.1:6379 under a key prefix of their own, or a local 3-primary Redis Cluster the phase starts
 * (REDIS_CLUSTER=true) — against one fake Slack workspace that answers 429 beyond Slack's tiers and
 * records every call, so windows over a limit are counted across the whole fleet. Slack only: the
 * Discord part of the bench is not built.
 *
 * The load: one warm-up mention in each of the first half of the channels (those are "seen"), then
 * `messages` mentions sent open-loop, evenly over `sendMs`, round the channels (the second half are
 * never seen before), from `users` users. Deliveries go through a round-robin "load balancer" that
 * knows nothing of health: an attempt that reaches a dead instance fails and is retried the way Slack
 * retries (drivers.ts), each retry to the next instance. With `kill`, instance 2 is SIGKILLed at 40 %
 * of the send window and restarted at once.
 */
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { type FakeSlack, startFakeSlack } from "../../test/fakes/slack/fake-slack.js";
import { type LocalCluster, startRedisCluster } from "../../test/support/redis-cluster.js";
import { createSlackDelivery, envelope } from "./drivers.js";
import { answeredTokens, createLedger, type Sent } from "./ledger.js";
import { type BenchModel, question, startBenchModel } from "./model.js";
import { observeSlack } from "./observe.js";
import { freePort, kill, type Owned, sleep, start, tempDir, until } from "./procs.js";
import { ROOT, SIGNING_SECRET, SLACK_TIERS } from "./stack.js";

const run = promisify(execFile);

export type FleetStore = "redis" | "cluster";

export interface FleetSpec {
  label: string;
  instances: number;
  store: FleetStore;
  kill: boolean;
  messages: number;
  channels: number;
  users: number;
  sendMs: number;
  /** Model latency per call (ms). */
  latencyMs: number;
  /** NEO_USER_TURNS_PER_MINUTE / NEO_USER_TURN_BURST: set to bind, so a user's share is measured. */
  turnsPerMinute: number;
  turnBurst: number;
  /** After the last send: until every message is answered, or this long. */
  drainMs: number;
  /** Tokens are `<prefix>m<k>` (measured) and `<prefix>w<k>` (warm-up); unique per phase. */
  prefix: string;
}

export interface FleetResult {
  spec: FleetSpec;
  /** The measured messages (not the warm-up). */
  sent: Sent[];
  /** Sender of each measured token. */
  userOf: Map<string, string>;
  warmupLost: number;
  /** When the first measured message was sent (epoch ms). */
  loadStartedAt: number;
  /** Calls the fake Slack refused because they went over its tier (429 + violation), by method. */
  overLimit: Record<string, number>;
  /** Distinct (method, channel or workspace, window) the over-limit calls fell in. */
  windowsOver: number;
  /** Measured messages whose answer came in a Slack write that answered other messages too (merged). */
  answeredTogether: number;
  /** Every call the fake answered, by method and status. */
  calls: Record<string, number>;
  killedAt?: number;
  /** Kill to the restarted instance's /healthz answering (ms). */
  restartMs?: number;
  tookMs: number;
}

const log = (s: string) => process.stderr.write(`bench:fleet: ${s}\n`);

interface Instance {
  id: string;
  httpPort: number;
  env: Record<string, string>;
  proc: Owned | null;
}

async function startInstance(inst: Instance): Promise<void> {
  const p = start(inst.id, process.execPath, ["--import", "tsx", "src/main.ts"], inst.env, ROOT);
  inst.proc = p;
  await until(
    `${inst.id}'s /healthz`,
    async () => {
      if (!p.alive()) throw new Error(`${inst.id} exited during start-up:\n${p.output().slice(-3000)}`);
      const res = await fetch(`http://127.0.0.1:${inst.httpPort}/healthz`).catch(() => null);
      return res !== null;
    },
    90_000,
  );
}

/** The store the fleet shares: env for it, and how to drop what the phase left. */
async function startStore(
  store: FleetStore,
  prefix: string,
): Promise<{ env: Record<string, string>; close(): Promise<void> }> {
  if (store === "cluster") {
    const cluster: LocalCluster = await startRedisCluster({ primaries: 3 });
    return { env: { REDIS_URL: cluster.url, REDIS_CLUSTER: "true" }, close: () => cluster.stop() };
  }
  const keyPrefix = `neo-bench-fleet:${process.pid}:${prefix}:`;
  return {
    env: { REDIS_URL: "redis://127.0.0.1:6379", NEO_KEY_PREFIX: keyPrefix },
    async close() {
      const { stdout } = await run("redis-cli", ["-p", "6379", "--scan", "--pattern", `${keyPrefix}*`], {
        maxBuffer: 64 * 2 ** 20,
      });
      const keys = stdout.split("\n").filter(Boolean);
      for (let i = 0; i < keys.length; i += 500)
        await run("redis-cli", ["-p", "6379", "del", ...keys.slice(i, i + 500)]);
    },
  };
}

/** The fake's over-limit calls, and the distinct windows they fell in. */
function overLimit(slack: FakeSlack): { byMethod: Record<string, number>; windows: number } {
  const byMethod: Record<string, number> = {};
  const windows = new Set<string>();
  for (const c of slack.violations()) {
    byMethod[c.method] = (byMethod[c.method] ?? 0) + 1;
    const tier = SLACK_TIERS[c.method];
    const scope = tier?.scope === "channel" ? String(c.args.channel) : "workspace";
    windows.add(`${c.method} ${scope} ${Math.floor(c.at / (tier?.windowMs ?? 1))}`);
  }
  return { byMethod, windows: windows.size };
}

export async function runFleetPhase(spec: FleetSpec): Promise<FleetResult> {
  const started = Date.now();
  const users = Array.from({ length: spec.users }, (_, i) => ({
    id: `UFLEET${i}`,
    name: `fleet${i}`,
    display_name: `Fleet ${i}`,
  }));
  const channels = Array.from({ length: spec.channels }, (_, i) => ({
    id: `CFL${spec.prefix.toUpperCase()}${String(i).padStart(4, "0")}`,
    name: `fleet-${spec.prefix}-${i}`,
  }));
  const slack = await startFakeSlack({
    teamId: "TBENCH",
    users: [...users, { id: "UNEO", name: "neo", display_name: "Neo", is_bot: true }],
    tiers: SLACK_TIERS,
    channels,
  });
  const model: BenchModel = await startBenchModel(spec.latencyMs);
  const store = await startStore(spec.store, spec.prefix);
  const ledger = createLedger();
  observeSlack(slack, ledger);
  const dir = tempDir("fleet");
  const manifest = join(dir, "agent.json");
  writeFileSync(manifest, JSON.stringify({ spawnTimeoutMs: 20_000, servers: {} }));
  const fleet: Instance[] = [];
  for (let i = 0; i < spec.instances; i++) {
    const httpPort = await freePort();
    const id = `fleet-${spec.prefix}-${i + 1}`;
    fleet.push({
      id,
      httpPort,
      proc: null,
      env: {
        SLACK_BOT_TOKEN: "xoxb-bench-token",
        SLACK_SIGNING_SECRET: SIGNING_SECRET,
        SLACK_API_URL: slack.apiUrl,
        NEO_HTTP_PORT: String(httpPort),
        NEO_METRICS_PORT: String(await freePort()),
        OPENAI_BASE_URL: model.url,
        OPENAI_API_KEY: "sk-bench-key",
        NEO_MCP_MANIFEST: manifest,
        NEO_INSTANCE_ID: id,
        NEO_DATA_DIR: join(dir, `data-${i}`),
        NEO_LOG_LEVEL: "warn",
        // A slot per message in flight: the fleet's limits, not the slot count, are under test.
        NEO_MAX_CONCURRENT_TURNS: "200",
        NEO_USER_TURNS_PER_MINUTE: String(spec.turnsPerMinute),
        NEO_USER_TURN_BURST: String(spec.turnBurst),
        ...store.env,
      },
    });
  }
  try {
    await Promise.all(fleet.map(startInstance));
    log(`${spec.label}: ${fleet.length} instance(s) up`);
    let rr = 0;
    const delivery = createSlackDelivery(() => {
      const inst = fleet[rr++ % fleet.length]!;
      return `http://127.0.0.1:${inst.httpPort}/slack/events`;
    }, SIGNING_SECRET);
    const userOf = new Map<string, string>();
    const mention = (token: string, channel: string, user: string): Promise<boolean> => {
      const ts = slack.nextTs();
      const text = `<@UNEO> ${question(token)}`;
      const event = { type: "app_mention", channel, user, text, ts, event_ts: ts };
      ledger.send(token, "slack", `slack:${channel}`);
      userOf.set(token, user);
      return delivery.deliver(envelope(slack.teamId, event));
    };

    // Warm-up: the first half of the channels become "seen".
    const seen = channels.slice(0, Math.floor(channels.length / 2));
    const warm = seen.map((_c, i) => `${spec.prefix}w${i}`);
    await Promise.all(warm.map((t, i) => mention(t, seen[i]!.id, users[i % users.length]!.id)));
    const warmOk = await Promise.all(warm.map((t) => ledger.answered(t, 60_000)));
    log(`${spec.label}: warm-up ${warmOk.filter(Boolean).length}/${warm.length} answered`);

    // The measured load, open loop.
    const t0 = Date.now();
    const tokens: string[] = [];
    const sends: Promise<boolean>[] = [];
    let killedAt: number | undefined;
    let restartMs: number | undefined;
    const killer = spec.kill
      ? (async () => {
          await sleep(spec.sendMs * 0.4);
          const victim = fleet[1]!;
          killedAt = Date.now();
          if (victim.proc) await kill(victim.proc);
          log(`${spec.label}: SIGKILLed ${victim.id}`);
          await startInstance(victim);
          restartMs = Date.now() - killedAt;
          log(`${spec.label}: ${victim.id} back after ${restartMs} ms`);
        })()
      : Promise.resolve();
    for (let k = 0; k < spec.messages; k++) {
      const due = t0 + (spec.sendMs * k) / spec.messages;
      if (due > Date.now()) await sleep(due - Date.now());
      const token = `${spec.prefix}m${k}`;
      tokens.push(token);
      const channel = channels[k % channels.length]!.id;
      // Users rotate independently of channels, so each user talks in many channels.
      const user = users[(k + Math.floor(k / channels.length)) % users.length]!.id;
      sends.push(mention(token, channel, user));
    }
    await killer;
    await Promise.all(sends);
    const drainUntil = Date.now() + spec.drainMs;
    const open = () => tokens.filter((t) => (ledger.sent.get(t)?.answers.length ?? 0) === 0);
    while (open().length > 0 && Date.now() < drainUntil) await sleep(200);
    await sleep(3000); // late duplicates
    const over = overLimit(slack);
    const calls: Record<string, number> = {};
    for (const c of slack.calls)
      calls[`${c.method} ${c.status}`] = (calls[`${c.method} ${c.status}`] ?? 0) + 1;
    const sent = tokens.map((t) => ledger.sent.get(t)!);
    const together = new Set<string>();
    for (const c of slack.calls) {
      if (c.status !== 200) continue;
      const found = answeredTokens(String(c.args.text ?? c.args.markdown_text ?? ""));
      if (new Set(found).size > 1)
        for (const t of found) if (t.startsWith(`${spec.prefix}m`)) together.add(t);
    }
    if (sent.some((s) => s.answers.length !== 1))
      for (const inst of fleet) log(`${inst.id} output tail:\n${inst.proc?.output().slice(-2000) ?? ""}`);
    return {
      spec,
      sent,
      userOf,
      warmupLost: warmOk.filter((ok) => !ok).length,
      loadStartedAt: t0,
      overLimit: over.byMethod,
      windowsOver: over.windows,
      answeredTogether: together.size,
      calls,
      killedAt,
      restartMs,
      tookMs: Date.now() - started,
    };
  } finally {
    for (const inst of fleet) if (inst.proc) await kill(inst.proc);
    await store.close();
    await slack.close();
    await model.close();
  }
}
