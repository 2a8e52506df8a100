/** Spend caps (rolling 24 h, per asset, decimal) and the access policy, on both stores. */
import { afterEach, describe, expect, it } from "vitest";
import { createAdminCheck } from "../../src/core/access/admin.js";
import { createAccessPolicy } from "../../src/core/access/policy.js";
import { ANY_ASSET, createSpendCaps, DAY_MS } from "../../src/core/approvals/caps.js";
import { BACKENDS, type Backend } from "../memory/support/stores.js";
import { alice, bob, transferPlan } from "./support/plans.js";

for (const backend of BACKENDS) {
  describe.skipIf(backend.skip)(`caps and access on the ${backend.name} store`, () => {
    let be: Backend;
    afterEach(async () => {
      await be?.cleanup();
    });

    it("a plan over the cap is refused with the reason; spend counts over a rolling 24 h", async () => {
      be = backend.factory("caps");
      const store = await be.open();
      const clock = { t: 1_000_000 };
      const caps = createSpendCaps({ store, now: () => clock.t });
      expect(await caps.check(alice.userKey, transferPlan("1000000"))).toEqual({ ok: true });

      await caps.setCap(alice.userKey, "usdc", "10", bob.userKey);
      expect(await caps.caps(alice.userKey)).toEqual({ USDC: "10" });
      expect(await caps.check(alice.userKey, transferPlan("10"))).toEqual({ ok: true });
      await caps.record(alice.userKey, transferPlan("6.5"));
      expect(await caps.spent(alice.userKey)).toEqual({ USDC: "6.5" });
      const over = await caps.check(alice.userKey, transferPlan("3.6"));
      expect(over).toEqual({
        ok: false,
        asset: "USDC",
        reason:
          "over the spend cap: 3.6 USDC plus 6.5 USDC spent in the last 24 h would be 10.1 USDC, above the cap of 10 USDC",
      });
      expect(await caps.check(alice.userKey, transferPlan("3.5"))).toEqual({ ok: true });
      // Other assets and other users are not affected.
      expect(await caps.check(alice.userKey, transferPlan("100", "ETH"))).toEqual({ ok: true });
      expect(await caps.check(bob.userKey, transferPlan("100"))).toEqual({ ok: true });

      clock.t += DAY_MS;
      expect(await caps.spent(alice.userKey)).toEqual({});
      expect(await caps.check(alice.userKey, transferPlan("10"))).toEqual({ ok: true });

      await caps.setCap(alice.userKey, "USDC", null, bob.userKey);
      expect(await caps.caps(alice.userKey)).toEqual({});
    });

    it("a cap set without an asset caps every asset that has no cap of its own", async () => {
      be = backend.factory("caps-any");
      const store = await be.open();
      const caps = createSpendCaps({ store });
      await caps.setCap(alice.userKey, ANY_ASSET, "50", bob.userKey);
      await caps.setCap(alice.userKey, "ETH", "0.5", bob.userKey);
      expect((await caps.check(alice.userKey, transferPlan("51"))).ok).toBe(false);
      expect((await caps.check(alice.userKey, transferPlan("51", "DAI"))).ok).toBe(false);
      expect((await caps.check(alice.userKey, transferPlan("50", "DAI"))).ok).toBe(true);
      // An asset's own cap wins over the catch-all, in both directions.
      expect((await caps.check(alice.userKey, transferPlan("0.6", "ETH"))).ok).toBe(false);
      expect((await caps.check(alice.userKey, transferPlan("0.5", "ETH"))).ok).toBe(true);
      expect((await caps.check(bob.userKey, transferPlan("51"))).ok).toBe(true);
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
