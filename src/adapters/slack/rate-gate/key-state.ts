/**
 * One gate key's window and state: the calls counted in its window, its reserved room, its 429
 * block, and who waits for room there. Pure over the state it is handed, timers aside
 * (`waitForRoom`); the gate (rate-gate.ts) decides who goes.
 */

/** At most `limit` calls in any `windowMs`. */
export interface RateRule {
  limit: number;
  windowMs: number;
}

/** Reserved room, until `expiresAt`. */
export interface Held {
  expiresAt: number;
}

/**
 * One call counted in a key's window: for as long as it is in flight (`at` is +Infinity: when Slack
 * counts it is not known yet, so it frees nothing), then from its answer.
 */
export interface Slot {
  at: number;
}

export interface KeyState {
  rule: RateRule;
  /** The rule's window widened by the gate's margin (clock skew never lets a call in early). */
  windowMs: number;
  sent: Slot[];
  /** Rooms reserved and not yet spent, given back or lapsed. */
  reserved: Set<Held>;
  /** Required calls waiting for room (or a Retry-After): optional calls and reservations yield. */
  held: number;
  tail: Promise<unknown>;
  blockedUntil: number;
  /** Woken when reserved room is given back (a waiting call may fit now). */
  wake: Array<() => void>;
  /** Calls of this key queued or in flight. */
  active: number;
  /** Calls that waited for room or a Retry-After (`waits()`). */
  waits: number;
}

/** A key nobody has used yet; `margin` is the extra fraction of each window kept free. */
export function newKeyState(rule: RateRule, margin: number): KeyState {
  return {
    rule,
    windowMs: Math.ceil(rule.windowMs * (1 + margin)),
    sent: [],
    reserved: new Set(),
    held: 0,
    tail: Promise.resolve(),
    blockedUntil: 0,
    wake: [],
    active: 0,
    waits: 0,
  };
}

/** Room for one more call now: not blocked, and the window holds fewer than the rule allows. */
export function roomNow(s: KeyState, now: number): boolean {
  s.sent = s.sent.filter((x) => x.at > now - s.windowMs);
  for (const h of s.reserved) if (h.expiresAt <= now) s.reserved.delete(h);
  return s.blockedUntil <= now && s.sent.length + s.reserved.size < s.rule.limit;
}

/**
 * A fresh state would replace this one exactly: nothing queued, in flight, waiting, blocked,
 * reserved or still in the window (`roomNow` first prunes the window and lapsed reservations).
 */
export function isIdle(s: KeyState, now: number): boolean {
  if (s.active > 0 || s.held > 0 || s.wake.length > 0) return false;
  return roomNow(s, now) && s.sent.length === 0 && s.reserved.size === 0;
}

/** Count one call in the window, in flight until `landed`. */
export function take(s: KeyState): Slot {
  const slot = { at: Number.POSITIVE_INFINITY };
  s.sent.push(slot);
  return slot;
}

/**
 * The call's answer came back: it counts from now (Slack saw it no later than that, so a later call
 * can never land inside its window, whatever the latency), and calls waiting for room look again.
 */
export function landed(s: KeyState, slot: Slot): void {
  slot.at = Date.now();
  wakeAll(s);
}

/** Room was given back: calls waiting for it look again. */
export function wakeAll(s: KeyState): void {
  for (const w of [...s.wake]) w();
}

/**
 * Until a 429's block ends, else until the oldest answered call leaves the window or a reservation
 * lapses; or until a call in flight is answered or reserved room is given back (`wakeAll`).
 */
export function waitForRoom(s: KeyState, now: number): Promise<void> {
  let oldest = Number.POSITIVE_INFINITY;
  for (const x of s.sent) if (x.at < oldest) oldest = x.at;
  const frees = Math.min(oldest + s.windowMs + 1, ...[...s.reserved].map((h) => h.expiresAt));
  const until = s.blockedUntil > now ? s.blockedUntil : frees;
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      s.wake = s.wake.filter((w) => w !== done);
      resolve();
    };
    // Nothing answered in the window and no reservation that lapses: only an answer or a give-back
    // frees room (no timer needed).
    const timer = Number.isFinite(until) ? setTimeout(done, Math.max(0, until - now)) : undefined;
    s.wake.push(done);
  });
}
