/**
 * `/neo memory export`: everything Neo holds about one person, for them. Their cortex (every record
 * with where it was learned, and the exchanges kept for recall), their usage counts, the approvals
 * they requested or decided and the audit entries about them. Whose is decided by `cortexOwner`:
 * a Discord person is one across guilds (their usage and approvals are keyed per guild), a Slack one
 * per workspace. Nothing of anyone else: another person's approval they decided shows only what
 * they decided, not who asked.
 */

import type { AuditEntry } from "../core/approvals/audit.js";
import { loadRecord, recordIds } from "../core/approvals/broker/records.js";
import type { MemoryItem } from "../core/commands/memory-view.js";
import { cortexOwner, hashTagOf, parseConversationKey, type UserKey } from "../core/keys.js";
import { USAGE_PREFIX } from "../core/usage/usage-store.js";
import type { Store } from "../store/types.js";
import type { Pager } from "./cortex/pager.js";
import { recordLine } from "./cortex/ranking.js";
import type { CortexRecord } from "./cortex/records.js";

/** The audit log's key (core/approvals/audit.ts). */
const AUDIT_KEY = "approvals:audit";

/** A record as the user's `/neo memory` shows it. */
export function memoryItem(r: CortexRecord): MemoryItem {
  const l = r.learned;
  const place = l?.everywhere ? "everywhere" : (l?.kind ?? "dm");
  return {
    id: r.id,
    kind: r.kind === "user_fact" ? "profile" : r.kind,
    text: recordLine(r),
    place,
    ...(l && l.workspace !== "unknown" ? { workspace: l.workspace } : {}),
    updatedAt: r.updatedAt,
  };
}

/** Where a record was learned, in the export: the place, and the channel of its conversation. */
function learnedWhere(r: CortexRecord) {
  const channel = r.source ? safeChannel(r.source) : undefined;
  return {
    place: r.learned?.everywhere ? "everywhere" : (r.learned?.kind ?? "dm"),
    learnedIn: r.learned?.kind ?? "dm",
    ...(r.learned ? { workspace: r.learned.workspace } : {}),
    ...(channel ? { channel } : {}),
    conversation: r.source,
  };
}

function safeChannel(conversation: string): string | undefined {
  try {
    return parseConversationKey(conversation).channel;
  } catch {
    return undefined;
  }
}

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

export async function exportUserData(store: Store, pager: Pager, user: UserKey, now = Date.now()) {
  const owner = cortexOwner(user);
  const mine = (key: string | null | undefined) => {
    if (!key) return false;
    try {
      return cortexOwner(key) === owner;
    } catch {
      return false;
    }
  };
  const cortex = await pager.exportUser(owner);
  const records = cortex.records.map((r) => {
    const { kind, id, createdAt, updatedAt, source: _s, learned: _l, ...rest } = r;
    return {
      id,
      kind: kind === "user_fact" ? "profile" : kind,
      ...rest,
      ...learnedWhere(r),
      createdAt: iso(createdAt),
      updatedAt: iso(updatedAt),
    };
  });
  const ofKind = (...kinds: string[]) => records.filter((r) => kinds.includes(r.kind));

  // Usage counters: `usage:<metric>:<period>:{<user key>}`, one per metric and UTC day or month.
  const usage = new Map<string, Record<string, number>>();
  for (const key of await store.keys(USAGE_PREFIX)) {
    if (!mine(hashTagOf(key))) continue;
    const [, metric = "", period = ""] = key.split(":");
    const value = (await store.get<number>(key)) ?? 0;
    const row = usage.get(period) ?? {};
    row[metric] = (row[metric] ?? 0) + value;
    usage.set(period, row);
  }

  const requested: unknown[] = [];
  const decided: unknown[] = [];
  for (const id of await recordIds(store)) {
    const r = await loadRecord(store, id);
    if (!r) continue;
    const when = { createdAt: iso(r.createdAt), decidedAt: iso(r.decidedAt) };
    if (mine(r.requester.userKey)) {
      const { messageRef: _m, instance: _i, ...rest } = r;
      requested.push({ ...rest, ...when, expiresAt: iso(r.expiresAt) });
    } else if (mine(r.decidedBy)) {
      decided.push({ id: r.id, status: r.status, summary: r.plan.summary, ...when });
    }
  }
  const audit = (await store.range<AuditEntry>(AUDIT_KEY, 0, -1))
    .filter((e) => mine(e.requester) || mine(e.actor))
    .map((e) => (mine(e.requester) ? e : { ...e, requester: "someone else" }))
    .map((e) => ({ ...e, at: iso(e.at) }));

  return {
    user,
    exportedAt: iso(now),
    note: "place: where a record is shown (dm: only in DMs; private: private channels and DMs of the workspace; public: every channel of the workspace; everywhere: you widened it). learnedIn: the kind of place it was said in.",
    facts: ofKind("fact", "profile"),
    constraints: ofKind("constraint"),
    goals: ofKind("goal"),
    patterns: ofKind("pattern"),
    outcomes: ofKind("outcome"),
    recalledExchanges: cortex.turns.map((t) => ({
      at: iso(t.at),
      conversation: t.conversation,
      place: t.learned?.kind ?? "dm",
      you: t.user,
      neo: t.assistant,
    })),
    usage: [...usage.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([period, m]) => ({
        period,
        usd: (m.nusd ?? 0) / 1e9,
        tokens: m.tok ?? 0,
        promptTokens: m.ptok ?? 0,
        cachedPromptTokens: m.ctok ?? 0,
        modelCalls: m.calls ?? 0,
      })),
    approvals: { requested, decided, audit },
  };
}
