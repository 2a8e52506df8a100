/**
 * Reading the cheap model's write-back answer: the outermost `{...}` is cut out of any prose or
 * code fence around it, then validated with zod. The answer holds an entry per conversation section
 * of the prompt, numbered as the section; each entry is read on its own, so nothing of one section
 * can be written as another's. Invalid items are dropped one by one; an answer with no JSON object
 * at all yields nothing. Limits (5 facts, 5 user facts, 3 patterns, 1 outcome; 3 hard constraints,
 * 1 goal change) are applied per section here so nothing beyond them can be written.
 */
import { z } from "zod";
import type { OutcomeStatus, PatternSpec } from "../cortex/records.js";

export const WRITEBACK_LIMITS = { facts: 5, userFacts: 5, patterns: 3, constraints: 3 } as const;

/** A goal the user opened (`active`) or the open goal on record finished (`done`) or dropped. */
export interface GoalChange {
  statement: string;
  status: "active" | "done" | "abandoned";
}

export interface WritebackExtract {
  facts: string[];
  userFacts: string[];
  patterns: PatternSpec[];
  outcome: { summary: string; status: OutcomeStatus } | null;
  /** Standing rules the user set for Neo: pinned as hard constraints. */
  constraints: string[];
  goal: GoalChange | null;
  /**
   * The user explicitly asked that what they said be remembered everywhere ("remember this
   * everywhere"): the records of this turn are shown in every place, not only where it ran.
   */
  everywhere: boolean;
}

export const EMPTY_EXTRACT: WritebackExtract = {
  facts: [],
  userFacts: [],
  patterns: [],
  outcome: null,
  constraints: [],
  goal: null,
  everywhere: false,
};

/** The outermost JSON object in `text`, or undefined when there is none that parses. */
export function parseLooseJson(text: string): unknown {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start < 0 || end <= start) return undefined;
  try {
    return JSON.parse(text.slice(start, end + 1));
  } catch {
    return undefined;
  }
}

const statement = z.string().trim().min(1).max(500);
const list = z.array(z.unknown()).catch([]);

const sectionNumber = z.object({ conversation: z.coerce.number().int().min(1) });

const entry = z.object({
  facts: list.default([]),
  user_facts: list.default([]),
  patterns: list.default([]),
  outcome: z.unknown().optional(),
  constraints: list.default([]),
  goal: z.unknown().optional(),
  remember_everywhere: z.unknown().optional(),
});

const strings = z
  .array(z.unknown())
  .catch([])
  .transform((xs) => xs.flatMap((x) => (typeof x === "string" && x.trim() ? [x.trim()] : [])));

const pattern = z.object({
  name: statement,
  trigger: statement,
  preconditions: strings.default([]),
  steps: strings.pipe(z.array(z.string()).min(1)),
  gotchas: strings.default([]),
  success_criteria: strings.default([]),
});

const outcome = z.object({
  summary: statement,
  status: z.string().transform((s, ctx): OutcomeStatus => {
    const v = s.trim().toLowerCase();
    if (v.startsWith("succ")) return "success";
    if (v.startsWith("fail")) return "failure";
    if (v.startsWith("partial")) return "partial";
    ctx.addIssue({ code: "custom", message: `unknown outcome status "${s}"` });
    return z.NEVER;
  }),
});

const goal = z.object({
  statement,
  status: z.string().transform((s, ctx): GoalChange["status"] => {
    const v = s.trim().toLowerCase();
    if (v === "active" || v === "open") return "active";
    if (v === "done" || v.startsWith("complete") || v.startsWith("finish")) return "done";
    if (v.startsWith("abandon") || v === "dropped" || v === "cancelled") return "abandoned";
    ctx.addIssue({ code: "custom", message: `unknown goal status "${s}"` });
    return z.NEVER;
  }),
});

const takeStatements = (xs: unknown[], max: number) => {
  const out: string[] = [];
  for (const x of xs) {
    const ok = statement.safeParse(x);
    if (ok.success && !out.includes(ok.data)) out.push(ok.data);
    if (out.length >= max) break;
  }
  return out;
};

/**
 * Parse a model answer into what may be written for each of the prompt's `sections` conversations
 * (index 0 = section 1). A section without an entry, or whose first entry is invalid, gets nothing;
 * entries numbered outside the prompt's sections are ignored. When the prompt has one section, an
 * entry that names none, or a bare entry without the `conversations` list (the one-conversation
 * answer of before, which models still give), can only be that section's and is read as such; with
 * several sections it is no one's. Never throws: an answer it cannot read at all (no JSON object,
 * no `conversations` list, or entries none of which names a section of the prompt) writes nothing
 * and says why in `unread`, for the operator to hear of a cheap model that never answers in shape.
 */
export function parseWriteback(
  text: string,
  sections: number,
): { extracts: WritebackExtract[]; unread?: string } {
  const extracts: WritebackExtract[] = Array.from({ length: sections }, () => EMPTY_EXTRACT);
  const json = parseLooseJson(text);
  if (!isObject(json)) return { extracts, unread: "no JSON object in the answer" };
  const listed = json.conversations;
  const bare = sections === 1 && !("conversations" in json);
  if (!bare && !Array.isArray(listed)) return { extracts, unread: "no `conversations` list in the answer" };
  const given: unknown[] = bare ? [json] : (listed as unknown[]);
  const seen = new Set<number>();
  for (const e of given) {
    const n = sectionNumber.safeParse(e);
    const named = isObject(e) && "conversation" in e;
    const section = n.success ? n.data.conversation : !named && sections === 1 ? 1 : 0;
    if (section < 1 || section > sections || seen.has(section)) continue;
    seen.add(section);
    extracts[section - 1] = parseEntry(e);
  }
  if (given.length > 0 && seen.size === 0)
    return { extracts, unread: `none of ${given.length} entries names a conversation of the prompt` };
  return { extracts };
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** One conversation's entry: what may be written for it. */
function parseEntry(value: unknown): WritebackExtract {
  const parsed = entry.safeParse(value);
  if (!parsed.success) return EMPTY_EXTRACT;
  const a = parsed.data;
  const patterns: PatternSpec[] = [];
  for (const p of a.patterns) {
    const ok = pattern.safeParse(p);
    if (!ok.success) continue;
    const { success_criteria, ...rest } = ok.data;
    patterns.push({ ...rest, successCriteria: success_criteria });
    if (patterns.length >= WRITEBACK_LIMITS.patterns) break;
  }
  const o = outcome.safeParse(a.outcome);
  const g = goal.safeParse(a.goal);
  return {
    facts: takeStatements(a.facts, WRITEBACK_LIMITS.facts),
    userFacts: takeStatements(a.user_facts, WRITEBACK_LIMITS.userFacts),
    patterns,
    outcome: o.success ? o.data : null,
    constraints: takeStatements(a.constraints, WRITEBACK_LIMITS.constraints),
    goal: g.success ? g.data : null,
    everywhere: a.remember_everywhere === true,
  };
}
