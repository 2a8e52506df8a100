/**
 * The memory module's CPU per message under the cpu-probe's traffic (bench/system/cpu-probe.ts):
 * one user asking "what is the status? Q-<token>" across 40 channels, so the user's turns pile up
 * sharing a word, as a long-lived user's do. Each message: warm the view, fault the page with the
 * channel's live transcript, record the turn; over the local Redis. Prints CPU µs per message (this
 * process: the memory code and its Redis client), a steadier A/B figure than a profile of the bot.
 *
 *   npx tsx bench/memory-replay.ts [messages=300]
 */
import type { LlmClient, Message } from "../src/core/llm/types.js";
import { createMemory } from "../src/memory/memory.js";
import { createStore } from "../src/store/create-store.js";
import { probeRedis, uniquePrefix } from "../test/support/redis.js";

const N = Number(process.argv[2] ?? 300);
const CHANNELS = 40;
const redis = await probeRedis();
if (!redis.ok) throw new Error(`no Redis: ${redis.reason}`);
const store = await createStore({
  redisUrl: redis.url,
  dataDir: "unused",
  prefix: uniquePrefix("memory-replay"),
});
// Write-back is not replayed (no model here): its consolidation is not per-message work.
const memory = createMemory({ store, llm: {} as LlmClient });
const user = "slack:TBENCH:UBENCH6";
const place = { kind: "public", workspace: "TBENCH" } as const;
const live = new Map<number, Message[]>();
const cpu = { fault: 0, all: 0 };
for (let i = 0; i < CHANNELS + N; i++) {
  const ch = i % CHANNELS;
  const conversation = `slack:TBENCH:C${ch}`;
  const query = `what is the status? Q-prn${1000 + i}`;
  const assistant = `ACK-prn${1000 + i}`;
  const working = live.get(ch) ?? [];
  live.set(ch, working);
  working.push({ role: "user", content: query, speaker: { userKey: user, displayName: "u" } });
  const c0 = process.cpuUsage();
  memory.warm(user);
  await memory.port.fault({ user, conversation, place, query, activeGoal: "", live: working });
  const c1 = process.cpuUsage(c0);
  working.push({ role: "assistant", content: assistant });
  await memory.pager.recordTurn(user, { conversation, user: query, assistant, learned: place });
  const c2 = process.cpuUsage(c0);
  if (i < CHANNELS) continue; // warm-up: one message per channel
  cpu.fault += c1.user + c1.system;
  cpu.all += c2.user + c2.system;
}
console.log(
  `CPU per message: fault ${(cpu.fault / N).toFixed(0)} µs, fault + record ${(cpu.all / N).toFixed(0)} µs`,
);
await memory.forget(user);
await store.close();
