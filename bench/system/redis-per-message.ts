/**
 * Redis as the overhead bench sees it, through the counting pass-through (redis-wire.ts): round trips
 * and commands per message, split at the model call, and the wait for a message's work to go quiet
 * before the next is sent.
 */
import { createConnection } from "node:net";
import { percentiles } from "../types.js";
import { now } from "./ledger.js";
import type { Stack } from "./stack.js";

/** Per message, medians: before the model call, between it and the post, and the whole message. */
export interface RedisPerMessage {
  toModel: { roundTrips: number; commands: number };
  fromModel: { roundTrips: number; commands: number };
  /** From the message being sent to the next one being sent (includes work after the post). */
  whole: { roundTrips: number; commands: number };
}

/** Redis traffic of messages sent one at a time, split at the model call (the wire's clock is the ledger's). */
export async function redisPerMessage(stack: Stack, tokens: string[]): Promise<RedisPerMessage | undefined> {
  const wire = stack.redisWire;
  if (!wire) return undefined;
  await wire.flush();
  const parts = { toModel: [] as number[][], fromModel: [] as number[][], whole: [] as number[][] };
  tokens.forEach((t, i) => {
    const s = stack.ledger.sent.get(t);
    const at = stack.model.arrivals.get(t);
    const next = stack.ledger.sent.get(tokens[i + 1] ?? "")?.sentAt;
    if (!s?.answers.length || at === undefined || next === undefined) return;
    const pick = (from: number, to: number) => {
      const b = wire.between(from, to);
      return [b.roundTrips, b.commands];
    };
    parts.toModel.push(pick(s.sentAt, at));
    parts.fromModel.push(pick(at, s.answers[0]!));
    parts.whole.push(pick(s.sentAt, next));
  });
  const med = (rows: number[][]) => ({
    roundTrips: percentiles(rows.map((r) => r[0]!)).median,
    commands: percentiles(rows.map((r) => r[1]!)).median,
  });
  return { toModel: med(parts.toModel), fromModel: med(parts.fromModel), whole: med(parts.whole) };
}

/** Redis quiet this long = the bot finished a message's work (write-back, usage) before the next. */
const QUIET_MS = 30;

/**
 * Commands the bench's redis-server has run (`INFO stats`, total_commands_processed), asked over one
 * connection of its own: it watches without standing between the bot and Redis, as the counting
 * wire does (a hop through another process on every round trip: ~0.5 ms before the model call and
 * ~2.5 ms after it, measured with marks in the bot, which the handling times must not carry).
 */
function commandCounter(port: number): { read(): Promise<number>; close(): void } {
  const sock = createConnection({ port, host: "127.0.0.1" });
  let buf = "";
  let waiting: { resolve(n: number): void; reject(e: Error): void } | null = null;
  let failed: Error | null = null;
  // A Redis that goes away ends the watch with its error (the read rejects), not the bench's process.
  const fail = (err: Error) => {
    failed ??= err;
    waiting?.reject(failed);
    waiting = null;
  };
  sock.on("error", fail);
  sock.on("close", () => fail(new Error("the Redis watch's connection closed")));
  sock.setEncoding("utf8");
  sock.on("data", (d: string) => {
    buf += d;
    const head = buf.indexOf("\r\n");
    if (head < 0 || !waiting) return;
    const len = Number(buf.slice(1, head));
    if (buf.length < head + 2 + len + 2) return;
    const body = buf.slice(head + 2, head + 2 + len);
    buf = buf.slice(head + 2 + len + 2);
    const m = /total_commands_processed:(\d+)/.exec(body);
    const w = waiting;
    waiting = null;
    w.resolve(Number(m?.[1] ?? Number.NaN));
  });
  return {
    read: () =>
      new Promise<number>((resolve, reject) => {
        if (failed) return reject(failed);
        waiting = { resolve, reject };
        sock.write("INFO stats\r\n");
      }),
    close: () => sock.destroy(),
  };
}

const counters = new WeakMap<Stack, ReturnType<typeof commandCounter>>();

/**
 * One at a time means one at a time: the next message waits until the last one's work after its
 * answer (write-back, usage accounting) is done, seen as Redis running no command but this watch's
 * own for QUIET_MS (at most 2 s). Not measured; without it that work lands inside the next message.
 */
export async function settled(stack: Stack): Promise<void> {
  let counter = counters.get(stack);
  if (!counter) {
    const made = commandCounter(stack.redis.port);
    stack.onClose(() => made.close());
    counters.set(stack, made);
    counter = made;
  }
  const deadline = now() + 2_000;
  let last = await counter.read();
  let quietSince = now();
  while (now() < deadline) {
    await new Promise((r) => setTimeout(r, 5));
    const n = await counter.read();
    // Each read is one command (INFO) of its own.
    if (n > last + 1) quietSince = now();
    last = n;
    if (now() - quietSince >= QUIET_MS) return;
  }
}
