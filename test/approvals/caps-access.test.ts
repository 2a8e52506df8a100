/** Spend caps (rolling 24 h, per asset, decimal) and the access policy, on both stores. */
import { afterEach, describe, expect, it } from "vitest";
import { createAdminCheck } from "../../src/core/access/admin.js";
import { createAccessPolicy } from "../../src/core/access/policy.js";
import { createSpendCaps, DAY_MS } from "../../src/core/approvals/caps.js";
import { BACKENDS, type Backend } from "../memory/support/stores.js";
import { alice, bob, transferPlan } from "./support/plans.js";

for (const backend of BACKENDS) {
  describe.skipIf(backend.skip)(`caps and access on the ${backend.name} store`, () => {
    let be: Backend;
    afterEach(async () => {
      await be?.cleanup();
    });

    it("a plan over the cap is refused with the reason; reserved and spent count over a rolling 24 h", async () => {
      be = backend.factory("caps");
      const store = await be.open();
      const clock = { t: 1_000_000 };
      const caps = createSpendCaps({ store, now: () => clock.t });
      expect(await caps.check(alice.userKey, transferPlan("1000000"))).toEqual({ ok: true });

      await caps.setCap(alice.userKey, "usdc", "10", bob.userKey);
      expect(await caps.caps(alice.userKey)).toEqual({ USDC: "10" });
      expect(await caps.check(alice.userKey, transferPlan("10"))).toEqual({ ok: true });
      expect(await caps.reserve(alice.userKey, "apv_1", transferPlan("6.5"))).toEqual({ ok: true });
      expect(await caps.spent(alice.userKey)).toEqual({ USDC: "6.5" });
      const over = await caps.check(alice.userKey, transferPlan("3.6"));
      expect(over).toEqual({
        ok: false,
        asset: "USDC",
        reason:
          "over the spend cap: 3.6 USDC plus 6.5 USDC spent or reserved in the last 24 h would be 10.1 USDC, above the cap of 10 USDC",
      });
      expect(await caps.check(alice.userKey, transferPlan("3.5"))).toEqual({ ok: true });
      // A failed execution releases its reservation; a successful one keeps what ran as spend.
      await caps.settle(alice.userKey, "apv_1", null);
      expect(await caps.spent(alice.userKey)).toEqual({});
      await caps.reserve(alice.userKey, "apv_2", transferPlan("6.5"));
      await caps.settle(alice.userKey, "apv_2", transferPlan("6.5"));
      expect(await caps.spent(alice.userKey)).toEqual({ USDC: "6.5" });
      // Another asset with no rate to USDC has an unknown value: over the cap (fail closed).
      const eth = await caps.check(alice.userKey, transferPlan("0.001", "ETH"));
      expect(eth.ok === false && eth.reason).toContain("the value of 0.001 ETH in USDC is unknown");
      expect(await caps.check(bob.userKey, transferPlan("100"))).toEqual({ ok: true });

      clock.t += DAY_MS;
      expect(await caps.spent(alice.userKey)).toEqual({});
      expect(await caps.check(alice.userKey, transferPlan("10"))).toEqual({ ok: true });

      await caps.setCap(alice.userKey, "USDC", null, bob.userKey);
      expect(await caps.caps(alice.userKey)).toEqual({});
    });

    it("every action is valued in the cap's unit by the declared rates; unknown value is over any cap", async () => {
      be = backend.factory("caps-rates");
      const store = await be.open();
      const caps = createSpendCaps({ store, rates: { "ETH/USDC": "3000", "USDT/USDC": "1" } });
      await caps.setCap(alice.userKey, "USDC", "10", bob.userKey);
      expect(await caps.check(alice.userKey, transferPlan("0.003", "ETH"))).toEqual({ ok: true });
      expect((await caps.check(alice.userKey, transferPlan("0.004", "ETH"))).ok).toBe(false);
      expect(await caps.check(alice.userKey, transferPlan("10", "USDT"))).toEqual({ ok: true });
      // A swap whose asset could not be read ("500 UNSPECIFIED") and an action with no amount.
      const unspecified = await caps.check(alice.userKey, transferPlan("500", "UNSPECIFIED"));
      expect(unspecified.ok === false && unspecified.reason).toContain("500 UNSPECIFIED in USDC is unknown");
      const noAmount = {
        ...transferPlan("1"),
        actions: [{ tool: "wallet__approve", arguments: {}, spend: null }],
      };
      expect((await caps.check(alice.userKey, noAmount)).ok).toBe(false);
      // Without a cap nothing is limited, known value or not.
      expect(await caps.check(bob.userKey, noAmount)).toEqual({ ok: true });
    });

    it("concurrent reservations never pass the cap together", async () => {
      be = backend.factory("caps-race");
      const store = await be.open();
      const caps = createSpendCaps({ store });
      await caps.setCap(alice.userKey, "USDC", "10", bob.userKey);
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => caps.reserve(alice.userKey, `apv_${i}`, transferPlan("4"))),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(2);
      expect(await caps.spent(alice.userKey)).toEqual({ USDC: "8" });
    });

    it("caps survive a restart", async () => {
      be = backend.factory("caps-restart");
      const first = await be.open();
      await createSpendCaps({ store: first }).setCap(alice.userKey, "ETH", "0.5", bob.userKey);
      await first.close();
      const caps = createSpendCaps({ store: await be.open() });
      expect((await caps.check(alice.userKey, transferPlan("0.6", "ETH"))).ok).toBe(false);
    });

    it("denied users are not allowed until allowed again; admins cannot be denied", async () => {
      be = backend.factory("access");
      const store = await be.open();
      const access = createAccessPolicy({ store, isAdmin: createAdminCheck(["bob"]) });
      expect(await access.isAllowed(alice.userKey)).toBe(true);
      await access.deny(alice.userKey, bob.userKey);
      expect(await access.isAllowed(alice.userKey)).toBe(false);
      expect((await access.denied()).map((d) => [d.userKey, d.by])).toEqual([[alice.userKey, bob.userKey]]);
      await expect(access.deny(bob.userKey, bob.userKey)).rejects.toMatchObject({ code: "ACCESS_REFUSED" });
      await access.allow(alice.userKey, bob.userKey);
      expect(await access.isAllowed(alice.userKey)).toBe(true);
      expect(access.isAdmin(bob.userKey)).toBe(true);
    });
  });
}
