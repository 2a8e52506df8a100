/**
 * A long-lived user's cortex, built deterministically through the real Pager: hundreds of turns and
 * records over a shared, skewed vocabulary (so every search walks long postings lists, as a real
 * user's would), learned in DMs and channels of two workspaces, over three months. `pageOf` reads
 * what a turn at a place would be shown for a query, as the tags of what was picked, in order.
 */
import type { Message } from "../../../src/core/llm/types.js";
import type { Place } from "../../../src/core/place.js";
import type { Pager } from "../../../src/memory/cortex/pager.js";
import { recordLine } from "../../../src/memory/cortex/ranking.js";
import type { CortexRecord } from "../../../src/memory/cortex/records.js";

export const USER = "slack:T1:ULONG";
export const PLACES: Record<string, Place> = {
  dm: { kind: "dm", workspace: "T1" },
  private: { kind: "private", workspace: "T1" },
  public: { kind: "public", workspace: "T1" },
  other: { kind: "public", workspace: "T2" },
};
const LEARNED = [PLACES.dm!, PLACES.private!, PLACES.public!, PLACES.public!, PLACES.other!];
const DAY = 86_400_000;

/** Common words first: a cubed uniform draw makes the first ones appear in most documents. */
const VOCAB = (
  "status deploy build release database server error test user service report update config " +
  "cluster staging production backup invoice customer ticket alert metric latency migration " +
  "schema index query cache queue worker token secret billing payment refund budget meeting " +
  "roadmap design review branch merge commit pipeline docker kubernetes terraform grafana " +
  "postgres redis kafka nginx certificate domain email slack calendar holiday contract vendor"
).split(" ");

function prng(seed: number) {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

export async function buildLongLivedCortex(pager: Pager, clock: { now: number }): Promise<void> {
  const rnd = prng(42);
  const word = () => VOCAB[Math.floor(VOCAB.length * rnd() ** 3)]!;
  const words = (n: number) => Array.from({ length: n }, word).join(" ");
  const origin = (i: number) => ({ conversation: `slack:T1:C${i % 7}:t${i % 13}`, learned: LEARNED[i % 5]! });
  for (let i = 0; i < 360; i++) {
    clock.now += Math.floor(rnd() * 0.25 * DAY);
    const o = origin(i);
    // The bench's shape too: a word in nearly every turn beside a tag found in none.
    const user = i % 3 === 0 ? `what is the status? Q-u${i}` : `u${i} ${words(4 + (i % 17))}`;
    await pager.recordTurn(USER, {
      conversation: o.conversation,
      user,
      assistant: `a${i} ${words(6)}`,
      learned: o.learned,
    });
    if (i % 3 === 1) await pager.rememberFact(USER, `f${i} ${words(3 + (i % 9))}`, o);
    if (i % 7 === 2) await pager.recordOutcome(USER, `o${i} ${words(5)}`, i % 2 ? "success" : "failure", o);
    if (i % 11 === 5) await pager.rememberUserFact(USER, `p${i} ${words(4)}`, o);
    if (i % 29 === 3) await pager.rememberConstraint(USER, `c${i} never ${words(3)}`, o);
    if (i % 23 === 4) await pager.setGoal(USER, `g${i} ${words(4)}`, o);
    if (i % 13 === 6) {
      const name = `n${i % 39} ${words(2)}`;
      await pager.reinforcePattern(USER, { name, trigger: words(3), steps: [words(2), words(3)] }, o);
    }
  }
}

export const QUERIES = [
  "what is the status? Q-new1",
  "status",
  "deploy the build to production and check the status",
  "postgres database migration schema index",
  "invoice customer refund payment billing",
  "why did the release pipeline fail on staging",
  "u12 u300",
  "kafka nginx certificate",
  "",
];

/** Tag of a record or turn: its first word (the builder makes it unique). */
const tag = (text: string) => text.split(" ")[0]!;

export async function pageOf(pager: Pager, here: Place, query: string) {
  const live: Message[] = [{ role: "user", content: `${query}\nwhat is the status? Q-u357` }];
  const [fault, recall, patterns, pinned] = await Promise.all([
    pager.fault(USER, here, query, 1200),
    pager.recallTurns(USER, here, query, { live, max: 16, tokenBudget: 1500 }),
    pager.faultPatterns(USER, here, query, 3),
    pager.pinned(USER, here),
  ]);
  const recordTag = (r: CortexRecord) =>
    tag(recordLine(r).replace(/^(goal|outcome) \(\w+\): |^pattern "/, ""));
  return {
    fault: fault.map((h) => recordTag(h.record)),
    recall: recall.map((t) => tag(t.user)),
    patterns: patterns.map((h) => recordTag(h.record)),
    pinned: [...pinned.constraints, ...pinned.profile].map((r) => tag(r.statement)),
    goal: tag(pinned.activeGoal),
  };
}
