/**
 * Faults, each injected while a (smaller) load runs on a fresh stack: Redis killed and restarted
 * (empty, a `--save ""` server; and from its append-only file, like a production Redis with a volume), the model endpoint failing for 10 s (429, 500 and hung requests in rotation), the MCP server
 * killed by pid, the bot process SIGKILLed and restarted. For each: messages lost and duplicated,
 * and the time to recover, measured from the moment the fault was removed (Redis answering again,
 * the endpoint healthy again, the MCP server killed, the new bot process spawned):
 * - first answer: the first answer to a message sent after that moment;
 * - backlog cleared: the last first-answer to a message sent before that moment.
 */
import { now } from "./ledger.js";
import { type LoadResult, type LoadSpec, runLoad } from "./load.js";
import { childPids, sleep } from "./procs.js";
import { MCP_TOOL, type Stack, startStack } from "./stack.js";

export type FaultName = "redis" | "redis-aof" | "model" | "mcp" | "bot";

export interface FaultResult {
  name: FaultName;
  title: string;
  /** What was done, in one line. */
  action: string;
  load: LoadResult;
  faultAt: number;
  removedAt: number;
  /** ms from removal to the first answer to a message sent after it (NaN: none). */
  firstAnswerAfterMs: number;
  /** ms from removal to the last first-answer of a message sent before it (0 when all were earlier). */
  backlogClearedMs: number;
  /** Messages sent between fault and removal. */
  sentDuringFault: number;
  /** The bot's most frequent warnings/errors during the run. */
  topLogs: Array<[string, number]>;
  notes: string[];
}

/** When the fault starts, after the load began. */
const FAULT_AFTER_MS = 4000;
const REDIS_DOWN_MS = 5000;
const MODEL_FAULT_MS = 10_000;

type Inject = (stack: Stack) => Promise<{ faultAt: number; removedAt: number; notes: string[] }>;

interface Fault {
  title: string;
  action: string;
  mcp: boolean;
  persistentRedis?: boolean;
  inject: Inject;
}

const killRedis: Inject = async (stack) => {
  const faultAt = now();
  await stack.redis.kill();
  await sleep(REDIS_DOWN_MS);
  await stack.redis.start();
  return { faultAt, removedAt: now(), notes: [] };
};

const faults: Record<FaultName, Fault> = {
  redis: {
    title: "Redis killed and restarted empty",
    action: `redis-server (bench-owned, \`--save "" --appendonly no\`) SIGKILLed, restarted ${REDIS_DOWN_MS / 1000} s later with no data`,
    mcp: false,
    inject: killRedis,
  },
  "redis-aof": {
    title: "Redis killed and restarted with its data",
    action: `redis-server (bench-owned, \`--appendonly yes --appendfsync always\`) SIGKILLed, restarted ${REDIS_DOWN_MS / 1000} s later from its append-only file`,
    mcp: false,
    persistentRedis: true,
    inject: killRedis,
  },
  model: {
    title: "Model endpoint failing for 10 s",
    action: "every model request for 10 s answered 429, 500 or never (client timeout 5 s), in rotation",
    mcp: false,
    inject: async (stack) => {
      const faultAt = now();
      stack.model.faultUntil = faultAt + MODEL_FAULT_MS;
      await sleep(MODEL_FAULT_MS);
      const f = stack.model.faults;
      return {
        faultAt,
        removedAt: stack.model.faultUntil,
        notes: [`failed model requests: ${f["429"]} × 429, ${f["500"]} × 500, ${f.timeout} hung`],
      };
    },
  },
  mcp: {
    title: "MCP server killed",
    action:
      "the stdio MCP fixture (test/fixtures/mcp/paged.ts) SIGKILLed by pid; every Discord turn calls its tool",
    mcp: true,
    inject: async (stack) => {
      const pids = childPids(stack.bot().pid, "paged.ts");
      if (pids.length === 0) throw new Error("mcp fault: no MCP server process found under the bot");
      const faultAt = now();
      for (const pid of pids) process.kill(pid, "SIGKILL");
      await sleep(8000);
      const okAfter = stack.model.toolOk.find((t) => t > faultAt);
      const failed = stack.model.toolFailed.filter((t) => t > faultAt).length;
      return {
        faultAt,
        removedAt: faultAt,
        notes: [
          `MCP server pid ${pids.join(",")} killed; tool results that were errors afterwards: ${failed}`,
          okAfter === undefined
            ? "no successful tool call within 8 s of the kill"
            : `first successful tool call ${(okAfter - faultAt).toFixed(0)} ms after the kill (server restarted by Neo)`,
        ],
      };
    },
  },
  bot: {
    title: "Bot process SIGKILLed and restarted",
    action: "the bot's process group SIGKILLed (as a container kill), a new process started at once",
    mcp: false,
    inject: async (stack) => {
      const faultAt = now();
      await stack.killBot();
      const removedAt = now();
      await stack.startBot();
      return {
        faultAt,
        removedAt,
        notes: [
          `new process ready (/healthz + Discord IDENTIFY) ${(now() - removedAt).toFixed(0)} ms after spawn`,
        ],
      };
    },
  },
};

export async function runFault(name: FaultName, spec: LoadSpec, env: Record<string, string>) {
  const f = faults[name];
  const stack = await startStack({ latencyMs: 200, mcp: f.mcp, env, persistentRedis: f.persistentRedis });
  try {
    await stack.startBot();
    if (f.mcp) {
      stack.model.tool = MCP_TOOL;
      // Discord turns only: a tool status on Slack costs a chat.delete (Tier 3, 50/min).
      stack.model.toolWhen = (token) => /^[a-z]+?d\d+x\d+$/.test(token);
    }
    const injected = (async () => {
      await sleep(FAULT_AFTER_MS);
      return f.inject(stack);
    })();
    const [load, done] = await Promise.all([runLoad(stack, spec), injected]);
    const after = load.all.filter((s) => s.sentAt >= done.removedAt && s.answers.length > 0);
    const before = load.all.filter((s) => s.sentAt < done.removedAt && s.answers.length > 0);
    const firstAfter = after.length ? Math.min(...after.map((s) => s.answers[0]!)) : Number.NaN;
    const lastBefore = before.length ? Math.max(...before.map((s) => s.answers[0]!)) : done.removedAt;
    const violations = stack.model.violations().length;
    return {
      name,
      title: f.title,
      action: f.action,
      load,
      faultAt: done.faultAt,
      removedAt: done.removedAt,
      firstAnswerAfterMs: firstAfter - done.removedAt,
      backlogClearedMs: Math.max(0, lastBefore - done.removedAt),
      topLogs: [...stack.logCounts.entries()]
        .filter(([msg]) => !/write-back queue .*full/.test(msg))
        .sort((a, b) => b[1] - a[1])
        .slice(0, 4),
      sentDuringFault: load.all.filter((s) => s.sentAt >= done.faultAt && s.sentAt < done.removedAt).length,
      notes: [
        ...done.notes,
        ...(violations ? [`model saw ${violations} inconsistent transcript(s) (prefix/pairing)`] : []),
      ],
    } satisfies FaultResult;
  } finally {
    await stack.close();
  }
}

export const FAULT_ORDER: FaultName[] = ["redis", "redis-aof", "model", "mcp", "bot"];
