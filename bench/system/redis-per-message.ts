/**
 * Redis as the overhead bench sees it, through the counting pass-through (redis-wire.ts): round trips
 * and commands per message, split at the model call, and the wait for a message's work to go quiet
 * before the next is sent.
 */
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
 * One at a time means one at a time: the next message waits until the last one's work after its
 * answer (write-back, usage accounting) is done, seen as the bot's Redis traffic going quiet (at most
 * 2 s). Not measured; without it that work's round trips land inside the next message's window.
 */
export async function settled(stack: Stack): Promise<void> {
  const wire = stack.redisWire;
  if (!wire) return;
  const deadline = now() + 2_000;
  while (now() < deadline) {
    await wire.flush();
    const last = wire.chunks.at(-1)?.at ?? 0;
    if (now() - last >= QUIET_MS) return;
    await new Promise((r) => setTimeout(r, 5));
  }
}
