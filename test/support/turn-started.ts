/**
 * The model is asked beside a turn's opening log write (issue 30), so a request reaching the scripted
 * endpoint no longer means the turn is logged. A test that cuts a turn "mid-turn" (a kill, a
 * failover) waits for that write too: until the store's conversation logs hold `n` turn starts.
 */
import type { Store } from "../../src/store/types.js";

export async function turnsStarted(store: Store, n = 1, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    let started = 0;
    for (const key of await store.keys("conv:log:")) {
      const entries = await store.range<{ type?: unknown }>(key, 0, -1);
      started += entries.filter((e) => e.type === "turn-start").length;
    }
    if (started >= n) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${n} turn start(s) in the store's logs`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
