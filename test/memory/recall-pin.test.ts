/**
 * What a long-lived user's turn is shown, pinned: the records faulted, the past turns recalled, the
 * patterns and the pinned block, in order, for several queries at every kind of place, now and a
 * month and a half later (recency). The ranking is made cheaper from time to time (lexical-index.ts,
 * ranking.ts); any such change that alters what is recalled fails here. The expected pages are in
 * fixtures/recall-pin.json, recorded from the ranking before those optimisations.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPager, type Pager } from "../../src/memory/cortex/pager.js";
import { buildLongLivedCortex, PLACES, pageOf, QUERIES } from "./support/realistic-cortex.js";
import { type Backend, redis, redisBackend } from "./support/stores.js";

const expected = JSON.parse(
  readFileSync(new URL("./fixtures/recall-pin.json", import.meta.url), "utf8"),
) as Record<string, unknown>;

describe.skipIf(!redis.ok)("recall of a long-lived user's cortex", () => {
  let backend: Backend;
  let pager: Pager;
  const clock = { now: 1_700_000_000_000 };

  beforeAll(async () => {
    backend = redisBackend("recall-pin");
    pager = createPager({ store: await backend.open(), now: () => clock.now });
    await buildLongLivedCortex(pager, clock);
  }, 60_000);
  afterAll(async () => {
    await backend.cleanup();
  });

  it("shows the same pages as recorded", async () => {
    const pages: Record<string, unknown> = {};
    for (const later of [0, 45]) {
      clock.now += later * 86_400_000;
      for (const [where, here] of Object.entries(PLACES))
        for (const query of QUERIES) pages[`+${later}d ${where} ${query}`] = await pageOf(pager, here, query);
    }
    expect(Object.keys(pages)).toHaveLength(72);
    expect(pages).toEqual(expected);
  });
});
