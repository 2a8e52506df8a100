/**
 * The turn slots of this instance, shared fairly across users (DESIGN.md, Fairness). At most `size`
 * turns do model work at once. When a slot frees, it goes to the waiting user with the fewest turns
 * running, among equals the one served least recently (round robin), then the one waiting longest,
 * so one user's backlog never holds another user's first turn back by more than one running turn.
 * A slot is for model work: a turn whose answer only waits for the platform hands it on
 * (`handOff`), and still counts as its user's until it ends. Each user also has a token bucket in
 * the store, shared by every instance (`takeToken`): a turn granted a slot first takes its user's
 * token (one round trip); a user who is over gives the slot back at once and waits for the refill
 * without holding one, the first waiter of such a burst hears it once (`onThrottled`), and nothing
 * is dropped. A user's own turns start in the order they asked (one take in flight per user).
 */
import type { UserKey } from "../keys.js";

export interface SlotRequest {
  /** Whose turn it is (the requester); the key fairness and the bucket are kept by. */
  user: UserKey;
  /**
   * False: the requester is not known yet (`user` stands in for fairness), so no token is taken;
   * the turn charges its requester itself once it knows them (turn-tokens.ts).
   */
  charge?: boolean;
  /**
   * No slot is free: `position` in line at the current pace (1 = next). Not called while its user
   * waits for a token (throttled: told once, by `onThrottled`).
   */
  onQueued?(position: number): void;
  /** The user's bucket is empty: told to the first waiter of a burst only, with the wait for a token. */
  onThrottled?(waitMs: number): void;
}

export interface SlotGrant {
  /** Free the slot (idempotent). */
  release(): void;
  /** True when a turn that could start now waits for a slot: a holder running several turns yields. */
  contended(): boolean;
  /**
   * The holder's model work is over and what is left only waits for the platform (its answer's
   * delivery): the slot goes to the next waiting turn now. Until `release`, the holder still counts
   * as running for its user's fair share, so a user whose answers queue behind a channel's pacing
   * is not served before others.
   */
  handOff(): void;
  /** False once handed off or released: no more model work under this grant. */
  readonly held: boolean;
}

export interface Slots {
  acquire(req: SlotRequest): Promise<SlotGrant>;
  /**
   * True when `user` asking now would be given a slot at once, its token aside (a slot free, no
   * one waiting, the user not held back by their rate).
   */
  opensNow(user: UserKey): boolean;
  readonly running: number;
  readonly waiting: number;
  /** Users whose waiting turns wait for a token. */
  readonly throttled: number;
  /** Stop granting: every waiter (and later caller) gets a `SlotsClosedError`. */
  close(): void;
}

/** Time, injectable so the bucket can be tested without waiting. */
export interface SlotClock {
  now(): number;
  /** Call `fn` after `ms`; the returned function cancels it. */
  after(ms: number, fn: () => void): () => void;
}

export interface SlotsOptions {
  size: number;
  /** Take one of `user`'s turn tokens: 0 = taken, else the ms until one is there (Store.takeToken). */
  takeToken(user: UserKey): Promise<number>;
  clock?: SlotClock;
}

export class SlotsClosedError extends Error {
  readonly code = "SLOTS_CLOSED";
}

interface Waiter {
  seq: number;
  req: SlotRequest;
  grant: (g: SlotGrant) => void;
  refuse: (err: Error) => void;
}

interface UserState {
  /** Over their rate until then (the store said so): nothing of theirs is granted before. */
  blockedUntil: number;
  /** A turn of theirs holds a slot while it takes a token. */
  taking: boolean;
  running: number;
  queue: Waiter[];
  /** This burst was told it is throttled (reset once the user has nothing waiting). */
  told: boolean;
  /** When the user was last given a slot (grant counter; 0 = never). */
  served: number;
}

const realClock: SlotClock = {
  now: () => Date.now(),
  after(ms, fn) {
    const t = setTimeout(fn, ms);
    t.unref();
    return () => clearTimeout(t);
  },
};

/** Idle users are forgotten once their bucket is full; swept when this many are held. */
const SWEEP_AT = 1000;

export function createSlots(opts: SlotsOptions): Slots {
  const clock = opts.clock ?? realClock;
  const users = new Map<UserKey, UserState>();
  let running = 0;
  let waiting = 0;
  let seq = 0;
  let grants = 0;
  let closed = false;
  let cancelTimer: (() => void) | null = null;

  const stateOf = (user: UserKey): UserState => {
    let u = users.get(user);
    if (!u) {
      if (users.size >= SWEEP_AT) sweep();
      u = {
        blockedUntil: 0,
        taking: false,
        running: 0,
        queue: [],
        told: false,
        served: 0,
      };
      users.set(user, u);
    }
    return u;
  };

  const sweep = () => {
    const now = clock.now();
    for (const [k, u] of users) {
      if (u.running === 0 && u.queue.length === 0 && !u.taking && u.blockedUntil <= now) users.delete(k);
    }
  };

  interface Rank {
    running: number;
    served: number;
    head: number;
  }
  /** Fewest running, then served least recently, then waiting longest: who gets the next slot. */
  const better = (a: Rank, b: Rank) =>
    a.running !== b.running
      ? a.running < b.running
      : a.served !== b.served
        ? a.served < b.served
        : a.head < b.head;
  const rank = (u: Pick<UserState, "running" | "served">, head: Waiter): Rank => ({
    running: u.running,
    served: u.served,
    head: head.seq,
  });

  const next = (now: number): UserState | undefined => {
    let best: UserState | undefined;
    for (const u of users.values()) {
      if (u.queue.length === 0 || u.taking || u.blockedUntil > now) continue;
      if (!best || better(rank(u, u.queue[0]!), rank(best, best.queue[0]!))) best = u;
    }
    return best;
  };

  const makeGrant = (u: UserState): SlotGrant => {
    let state: "held" | "handed" | "done" = "held";
    return {
      release() {
        if (state === "done") return;
        if (state === "held") running--;
        state = "done";
        u.running--;
        schedule();
      },
      handOff() {
        if (state !== "held") return;
        state = "handed";
        running--;
        schedule();
      },
      get held() {
        return state === "held";
      },
      contended: () => !closed && next(clock.now()) !== undefined,
    };
  };

  function schedule(): void {
    if (closed) return;
    const now = clock.now();
    while (running < opts.size) {
      const u = next(now);
      if (!u) break;
      const w = u.queue.shift()!;
      waiting--;
      u.running++;
      u.served = ++grants;
      running++;
      u.taking = true;
      const take = w.req.charge === false ? Promise.resolve(0) : opts.takeToken(w.req.user);
      void take.then(
        (wait) => tokenTaken(u, w, wait),
        (err: unknown) => {
          untake(u);
          w.refuse(err instanceof Error ? err : new Error(String(err)));
          schedule();
        },
      );
    }
    // Waiters held back by their rate alone: wake at the soonest refill.
    cancelTimer?.();
    cancelTimer = null;
    let soonest = Number.POSITIVE_INFINITY;
    for (const u of users.values()) {
      if (u.queue.length > 0 && u.blockedUntil > now) soonest = Math.min(soonest, u.blockedUntil - now);
    }
    if (running < opts.size && Number.isFinite(soonest)) cancelTimer = clock.after(soonest, schedule);
  }

  /** Give back the slot a token take held. */
  function untake(u: UserState): void {
    u.taking = false;
    u.running--;
    running--;
  }

  /** The store answered `w`'s take: start it, or put it back at its user's head until the refill. */
  function tokenTaken(u: UserState, w: Waiter, wait: number): void {
    if (closed) {
      untake(u);
      w.refuse(new SlotsClosedError("no new turns: shutting down"));
      return;
    }
    if (wait === 0) {
      u.taking = false;
      if (u.queue.length === 0) u.told = false;
      w.grant(makeGrant(u));
      schedule();
      return;
    }
    untake(u);
    u.blockedUntil = clock.now() + wait;
    u.queue.unshift(w);
    waiting++;
    // The first waiter of a burst hears it once.
    if (!u.told) {
      u.told = true;
      w.req.onThrottled?.(wait);
    }
    schedule();
  }

  /** Where `w` stands in line if every waiting user had tokens (1 = next). */
  const positionOf = (w: Waiter): number => {
    const sim = [...users.values()]
      .filter((u) => u.queue.length > 0)
      .map((u) => ({ running: u.running, served: u.served, queue: u.queue, at: 0 }));
    let served = grants;
    for (let position = 1; ; position++) {
      let best: (typeof sim)[number] | undefined;
      for (const s of sim) {
        if (s.at >= s.queue.length) continue;
        if (!best || better(rank(s, s.queue[s.at]!), rank(best, best.queue[best.at]!))) best = s;
      }
      if (!best || best.queue[best.at] === w) return position;
      best.at++;
      best.running++;
      best.served = ++served;
    }
  };

  return {
    acquire(req) {
      if (closed) return Promise.reject(new SlotsClosedError("no new turns: shutting down"));
      const u = stateOf(req.user);
      return new Promise<SlotGrant>((grant, refuse) => {
        const w: Waiter = { seq: ++seq, req, grant, refuse };
        u.queue.push(w);
        waiting++;
        schedule();
        // Still waiting, and for a slot (not behind its user's token take): a user over their rate
        // was told that instead.
        const forSlot = running >= opts.size && u.blockedUntil <= clock.now() && !u.told;
        if (u.queue.at(-1) === w && forSlot) req.onQueued?.(positionOf(w));
      });
    },
    opensNow(user) {
      const u = users.get(user);
      return !closed && running < opts.size && waiting === 0 && !(u && u.blockedUntil > clock.now());
    },
    get running() {
      return running;
    },
    get waiting() {
      return waiting;
    },
    get throttled() {
      const now = clock.now();
      let n = 0;
      for (const u of users.values()) if (u.queue.length > 0 && u.blockedUntil > now) n++;
      return n;
    },
    close() {
      closed = true;
      cancelTimer?.();
      cancelTimer = null;
      for (const u of users.values()) {
        for (const w of u.queue.splice(0)) w.refuse(new SlotsClosedError("no new turns: shutting down"));
      }
      waiting = 0;
    },
  };
}
