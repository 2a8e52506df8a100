/**
 * Retention of what is kept about people (issue 32, item 1), on both stores:
 * - the approvals audit keeps `NEO_AUDIT_RETENTION_DAYS` (older entries leave the list's front, and
 *   stay gone after a reopen: the file store replays the trim);
 * - with `NEO_MEMORY_RETENTION_DAYS`, cortex records and recalled turns not learned or reinforced
 *   for that long are dropped at the user's next write, and a whole cortex nothing was written to
 *   for that long expires from the store.
 */
import { afterEach, describe, expect, it } from "vitest";
import { AUDIT_KEY, type AuditEntry, createAuditLog } from "../../src/core/approvals/audit.js";
import { createPager } from "../../src/memory/cortex/pager.js";
import { cortexKeys } from "../../src/memory/cortex/records.js";
import type { Store } from "../../src/store/types.js";
import { until } from "./support/redis-server.js";
import { BACKENDS, type Backend } from "./support/stores.js";

const DAY = 86_400_000;
const USER = "slack:T1:U1";
const entry = (at: number, summary: string): AuditEntry => ({
  at,
  event: "requested",
  actor: USER,
  approvalId: summary,
  planId: null,
  requester: USER,
  summary,
});

for (const { name, factory, skip } of BACKENDS) {
  describe.skipIf(skip)(`retention: ${name}`, () => {
    let backend: Backend;
    let store: Store;
    afterEach(async () => {
      await backend.cleanup();
    });

    it("the audit log drops entries older than its retention, once a day, and they stay dropped", async () => {
      backend = factory("audit-retention");
      store = await backend.open();
      let t = 10 * DAY;
      const audit = createAuditLog(store, { retentionMs: 2 * DAY, now: () => t });
      for (let i = 0; i < 3; i++) await audit.append(entry(t + i, `old-${i}`));
      t += DAY;
      await audit.append(entry(t, "middle"));
      t += 2 * DAY - 1;
      await audit.append(entry(t, "new"));
      const kept = (await store.range<AuditEntry>(AUDIT_KEY, 0, -1)).map((e) => e.summary);
      expect(kept).toEqual(["middle", "new"]);
      // Another process's log on the same day does not trim again (the day's claim).
      await createAuditLog(store, { retentionMs: 1, now: () => t }).append(entry(t, "same-day"));
      expect(await store.length(AUDIT_KEY)).toBe(3);
      await store.close();
      store = await backend.open();
      expect((await store.range<AuditEntry>(AUDIT_KEY, 0, -1)).map((e) => e.summary)).toEqual([
        "middle",
        "new",
        "same-day",
      ]);
    });

    it("memory retention drops records and turns not written for that long at the next write", async () => {
      backend = factory("memory-retention");
      store = await backend.open();
      let t = 100 * DAY;
      const pager = createPager({ store, now: () => t, retentionMs: 3 * DAY });
      const conv = "slack:T1:D1:1.1";
      await pager.rememberFact(USER, "stale fact: likes cobalt tea");
      await pager.recordTurn(USER, { conversation: conv, user: "old question", assistant: "old answer" });
      t += 2 * DAY;
      const kept = await pager.rememberFact(USER, "kept fact: works in Lisbon");
      t += 2 * DAY;
      await pager.rememberFact(USER, "fresh fact");
      const statements = (await pager.records(USER)).map((r) => ("statement" in r ? r.statement : ""));
      expect(statements.sort()).toEqual(["fresh fact", kept.statement]);
      const raw = JSON.stringify([
        await store.range(cortexKeys(USER).records, 0, -1),
        await store.range(cortexKeys(USER).turns, 0, -1),
      ]);
      expect(raw).not.toContain("cobalt");
      expect(raw).not.toContain("old question");
    });

    it("a cortex nothing was written to for the retention expires whole; unset keeps it", async () => {
      backend = factory("memory-ttl");
      store = await backend.open();
      const kept = createPager({ store });
      await kept.rememberFact("slack:T1:U2", "kept without a retention");
      const pager = createPager({ store, retentionMs: 300 });
      await pager.rememberFact(USER, "a fact");
      await pager.recordTurn(USER, { conversation: "slack:T1:D1:1.1", user: "q", assistant: "a" });
      expect((await store.keys(cortexKeys(USER).root)).length).toBeGreaterThan(0);
      await until(async () => (await store.keys(cortexKeys(USER).root)).length === 0);
      expect(await store.keys(cortexKeys("slack:T1:U2").root)).not.toEqual([]);
    });
  });
}
