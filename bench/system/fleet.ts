/**
 * One phase of the fleet bench (issue 31 item 5): `instances` REAL Neo processes on one store — the
 * shared Redis on 127.0.0.1:6379 under a key prefix of their own, or a local 3-primary Redis Cluster
 * the phase starts (REDIS_CLUSTER=true) — against one platform's fake (fleet-slack.ts,
 * fleet-discord.ts) that answers 429 beyond the platform's documented limits and records every call,
 * so windows over a limit are counted across the whole fleet.
 *
 * The load: one warm-up mention in each of the first half of the channels (those are "seen"), then
 * `messages` mentions sent open-loop, evenly over `sendMs`, round the channels (the second half are
 * never seen before), from `users` users. With `kill`, instance 2 is SIGKILLed at 40 % of the send
 * window and restarted at once. How a mention reaches the fleet is the platform's (Slack: a
 * round-robin load balancer with Slack's retries; Discord: the gateway, to the guild's shard).
 */
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { type LocalCluster, startRedisCluster } from "../../test/support/redis-cluster.js";
import { createLedger, type Ledger, type Sent } from "./ledger.js";
import { type BenchModel, startBenchModel } from "./model.js";
import { kill, type Owned, sleep, startNeo, tempDir, until } from "./procs.js";

const run = promisify(execFile);

export type FleetStore = "redis" | "cluster";
export type FleetPlatformName = "slack" | "discord";

export interface FleetSpec {
  label: string;
  platform: FleetPlatformName;
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

/** What the platform's fake saw, read after the drain. */
export interface FleetJudgement {
  /** Calls the fake refused because they went over a documented limit, by limit. */
  overLimit: Record<string, number>;
  /** Distinct (limit, key, window) the over-limit calls fell in. */
  windowsOver: number;
  /** Anything else worth a line (Discord: the fleet's busiest second). */
  note?: string;
  /** Measured messages whose answer came in a write that answered other messages too (merged). */
  answeredTogether: number;
  /** Every call the fake answered, by method (and route) and status. */
  calls: Record<string, number>;
}

export interface FleetResult extends FleetJudgement {
  spec: FleetSpec;
  /** The measured messages (not the warm-up). */
  sent: Sent[];
  /**
   * Sender of each measured token, as `user<index>`: the same person in every phase of a platform,
   * whatever ids that phase's fake gave them.
   */
  userOf: Map<string, string>;
  warmupLost: number;
  /** When the first measured message was sent (epoch ms). */
  loadStartedAt: number;
  killedAt?: number;
  /** Kill to the restarted instance serving again (/healthz and connected to the platform), ms. */
  restartMs?: number;
  tookMs: number;
}

/** One platform's side of a phase: its fake, how instances reach it, how a mention is sent. */
export interface FleetPlatform {
  /** The platform's environment of instance `i` (tokens, API URLs, ports, instance id). */
  env(i: number): Record<string, string>;
  /** Where instance `i` answers /healthz. */
  healthPort(i: number): number;
  /** Called right before instance `i` starts: the returned check holds once it reached the platform. */
  connected(i: number): () => boolean;
  /** Send measured or warm-up mention `token` into channel `channel` from user `user` (indices). */
  mention(token: string, channel: number, user: number): Promise<unknown>;
  /**
   * Who sends message `k` (into channel index `channel`); unset = users rotate independently of
   * channels, so each user talks in many channels.
   */
  userFor?(k: number, channel: number): number;
  judge(prefix: string): FleetJudgement;
  close(): Promise<void>;
}

export type FleetPlatformFactory = (spec: FleetSpec, ledger: Ledger) => Promise<FleetPlatform>;

const log = (s: string) => process.stderr.write(`bench:fleet: ${s}\n`);

interface Instance {
  id: string;
  env: Record<string, string>;
  proc: Owned | null;
}

async function startInstance(inst: Instance, i: number, platform: FleetPlatform): Promise<void> {
  const connected = platform.connected(i);
  const p = startNeo(inst.id, inst.env);
  inst.proc = p;
  await until(
    `${inst.id}'s /healthz and platform connection`,
    async () => {
      if (!p.alive()) throw new Error(`${inst.id} exited during start-up:\n${p.output().slice(-3000)}`);
      if (!connected()) return false;
      const res = await fetch(`http://127.0.0.1:${platform.healthPort(i)}/healthz`).catch(() => null);
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

export async function runFleetPhase(
  spec: FleetSpec,
  makePlatform: FleetPlatformFactory,
): Promise<FleetResult> {
  const started = Date.now();
  const ledger = createLedger();
  const platform = await makePlatform(spec, ledger);
  const model: BenchModel = await startBenchModel(spec.latencyMs);
  const store = await startStore(spec.store, spec.prefix);
  const dir = tempDir("fleet");
  const manifest = join(dir, "agent.json");
  writeFileSync(manifest, JSON.stringify({ spawnTimeoutMs: 20_000, servers: {} }));
  const fleet: Instance[] = Array.from({ length: spec.instances }, (_, i) => ({
    id: `fleet-${spec.prefix}-${i + 1}`,
    proc: null,
    env: {
      OPENAI_BASE_URL: model.url,
      OPENAI_API_KEY: "sk-bench-key",
      NEO_MCP_MANIFEST: manifest,
      NEO_DATA_DIR: join(dir, `data-${i}`),
      NEO_LOG_LEVEL: "warn",
      // A slot per message in flight: the fleet's limits, not the slot count, are under test.
      NEO_MAX_CONCURRENT_TURNS: "200",
      NEO_USER_TURNS_PER_MINUTE: String(spec.turnsPerMinute),
      NEO_USER_TURN_BURST: String(spec.turnBurst),
      ...store.env,
      ...platform.env(i),
    },
  }));
  try {
    await Promise.all(fleet.map((inst, i) => startInstance(inst, i, platform)));
    log(`${spec.label}: ${fleet.length} instance(s) up`);
    const userOf = new Map<string, string>();
    const userFor =
      platform.userFor?.bind(platform) ?? ((k: number) => (k + Math.floor(k / spec.channels)) % spec.users);
    const mention = (token: string, channel: number, user: number): Promise<unknown> => {
      userOf.set(token, `user${user}`);
      return platform.mention(token, channel, user);
    };

    // Warm-up: the first half of the channels become "seen".
    const warm = Array.from({ length: Math.floor(spec.channels / 2) }, (_, i) => `${spec.prefix}w${i}`);
    await Promise.all(warm.map((t, i) => mention(t, i, userFor(i, i))));
    const warmOk = await Promise.all(warm.map((t) => ledger.answered(t, 60_000)));
    log(`${spec.label}: warm-up ${warmOk.filter(Boolean).length}/${warm.length} answered`);

    // The measured load, open loop.
    const t0 = Date.now();
    const tokens: string[] = [];
    const sends: Promise<unknown>[] = [];
    let killedAt: number | undefined;
    let restartMs: number | undefined;
    const killer = spec.kill
      ? (async () => {
          await sleep(spec.sendMs * 0.4);
          const victim = fleet[1]!;
          killedAt = Date.now();
          if (victim.proc) await kill(victim.proc);
          log(`${spec.label}: SIGKILLed ${victim.id}`);
          await startInstance(victim, 1, platform);
          restartMs = Date.now() - killedAt;
          log(`${spec.label}: ${victim.id} back after ${restartMs} ms`);
        })()
      : Promise.resolve();
    for (let k = 0; k < spec.messages; k++) {
      const due = t0 + (spec.sendMs * k) / spec.messages;
      if (due > Date.now()) await sleep(due - Date.now());
      const token = `${spec.prefix}m${k}`;
      tokens.push(token);
      const channel = k % spec.channels;
      sends.push(mention(token, channel, userFor(k, channel)));
    }
    await killer;
    await Promise.all(sends);
    const drainUntil = Date.now() + spec.drainMs;
    const open = () => tokens.filter((t) => (ledger.sent.get(t)?.answers.length ?? 0) === 0);
    while (open().length > 0 && Date.now() < drainUntil) await sleep(200);
    await sleep(3000); // late duplicates
    const sent = tokens.map((t) => ledger.sent.get(t)!);
    for (const s of sent.filter((x) => x.answers.length !== 1))
      log(
        `${spec.label}: ${s.token} in ${s.conv} sent at +${((s.sentAt - t0) / 1000).toFixed(1)} s${killedAt ? ` (kill at +${((killedAt - t0) / 1000).toFixed(1)} s)` : ""}: ${s.answers.length} answers`,
      );
    if (sent.some((s) => s.answers.length !== 1))
      for (const inst of fleet) log(`${inst.id} output tail:\n${inst.proc?.output().slice(-2000) ?? ""}`);
    return {
      spec,
      sent,
      userOf,
      warmupLost: warmOk.filter((ok) => !ok).length,
      loadStartedAt: t0,
      ...platform.judge(spec.prefix),
      killedAt,
      restartMs,
      tookMs: Date.now() - started,
    };
  } finally {
    for (const inst of fleet) if (inst.proc) await kill(inst.proc);
    await store.close();
    await platform.close();
    await model.close();
  }
}
