/**
 * The cortex Pager, against both stores: remembering, dedupe, reinforcement, ranked faulting within
 * a budget, pinned block, recall of past turns, forget/export, per-user isolation, validity of the
 * in-process cache across instances, and restart.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createPager, type Pager } from "../../src/memory/cortex/pager.js";
import { CANDIDATE_STRENGTH } from "../../src/memory/cortex/patterns.js";
import { recordLine } from "../../src/memory/cortex/ranking.js";
import { cortexKeys } from "../../src/memory/cortex/records.js";
import type { Store } from "../../src/store/types.js";
import { BACKENDS, type Backend } from "./support/stores.js";

const ALICE = "discord:guild1:alice";
const BOB = "discord:guild1:bob";
const CONV = "discord:guild1:chan:thread1";
/** Reads from a DM see every record; writes carry the conversation and the place they came from. */
const DM = { kind: "dm", workspace: "guild1" } as const;
const AT = { conversation: CONV, learned: DM } as const;
const DAY = 86_400_000;

for (const { name, factory, skip } of BACKENDS) {
  describe.skipIf(skip)(`Pager on ${name}`, () => {
    let backend: Backend;
    let store: Store;
    let clock = 1_700_000_000_000;
    const now = () => clock;
    const open = async (test: string): Promise<Pager> => {
      backend = factory(`pager-${test}`);
      store = await backend.open();
      return createPager({ store, now });
    };
    afterEach(async () => {
      await backend.cleanup();
    });

    it("dedupes user facts by normalized statement and pins the profile", async () => {
      const pager = await open("profile");
      const first = await pager.rememberUserFact(ALICE, "Alice prefers answers in French.", AT);
      const again = await pager.rememberUserFact(ALICE, "  alice PREFERS answers in   french ", AT);
      expect(again.id).toBe(first.id);
      await pager.rememberUserFact(ALICE, "Alice is a Rust developer");
      const pinned = await pager.pinned(ALICE, DM);
      expect(pinned.profile.map((p) => p.statement).sort()).toEqual([
        "Alice is a Rust developer",
        "Alice prefers answers in French.",
      ]);
      expect(first).toMatchObject({ kind: "user_fact", source: CONV, createdAt: clock, updatedAt: clock });
      expect(first.id).toMatch(/\w{8}-/);
    });

    it("faults the most relevant records first, within the token budget, weighting recency", async () => {
      const pager = await open("fault");
      const old = await pager.rememberFact(ALICE, "The staging database runs Postgres 15 on db-staging-01.");
      clock += 90 * DAY;
      const fresh = await pager.rememberFact(
        ALICE,
        "The production database runs Postgres 16 on db-prod-02.",
      );
      await pager.rememberFact(ALICE, "The office coffee machine is on the third floor.");
      await pager.recordOutcome(ALICE, "Migrated the billing service to Postgres 16", "success", AT);

      const hits = await pager.fault(ALICE, DM, "which Postgres version does the database run?", 500);
      const ids = hits.map((h) => h.record.id);
      expect(ids).toContain(old.id);
      expect(ids).toContain(fresh.id);
      expect(ids.indexOf(fresh.id)).toBeLessThan(ids.indexOf(old.id));
      expect(hits.some((h) => h.record.kind === "outcome")).toBe(true);
      expect(hits.map((h) => JSON.stringify(h.record))).not.toContainEqual(expect.stringContaining("coffee"));

      const tight = await pager.fault(ALICE, DM, "which Postgres version does the database run?", 20);
      expect(tight.length).toBe(1);
      expect(await pager.fault(ALICE, DM, "completely unrelated gardening tulips", 500)).toEqual([]);
      expect((await pager.fault(ALICE, DM, "db-prod-02", 500))[0]!.record.id).toBe(fresh.id);
    });

    it("reinforces a pattern with the same identity and starts others as low-confidence candidates", async () => {
      const pager = await open("patterns");
      const spec = {
        name: "Deploy the web app",
        trigger: "user asks to deploy the web app",
        steps: ["run the tests", "build the image", "push to the registry"],
        gotchas: ["the registry needs a fresh token"],
      };
      const first = await pager.reinforcePattern(ALICE, spec, AT);
      expect(first.reinforced).toBe(false);
      expect(first.record).toMatchObject({ coverage: 1, strength: CANDIDATE_STRENGTH, successCriteria: [] });
      const second = await pager.reinforcePattern(ALICE, {
        ...spec,
        name: "deploy the WEB app.",
        gotchas: ["CI is slow on Mondays"],
      });
      expect(second.reinforced).toBe(true);
      expect(second.record.id).toBe(first.record.id);
      expect(second.record.coverage).toBe(2);
      expect(second.record.strength).toBeGreaterThan(CANDIDATE_STRENGTH);
      expect(second.record.gotchas).toEqual(["the registry needs a fresh token", "CI is slow on Mondays"]);
      const bySteps = await pager.reinforcePattern(ALICE, {
        name: "Ship it",
        trigger: "ship",
        steps: spec.steps,
      });
      expect(bySteps).toMatchObject({ reinforced: true, record: { coverage: 3 } });
      const other = await pager.reinforcePattern(ALICE, {
        name: "Rotate keys",
        trigger: "user asks to rotate API keys",
        steps: ["revoke", "issue"],
      });
      expect(other.reinforced).toBe(false);

      const matched = await pager.faultPatterns(ALICE, DM, "please deploy the web app to production");
      expect(matched[0]!.record.id).toBe(first.record.id);
      expect(matched[0]!.record.coverage).toBe(3);
      expect((await pager.records(ALICE)).filter((r) => r.kind === "pattern")).toHaveLength(2);
    });

    it("pins hard constraints and the active goal, and closes goals", async () => {
      const pager = await open("pinned");
      await pager.rememberConstraint(ALICE, "Never spend more than 5 USDC without asking");
      const goal = await pager.setGoal(ALICE, "Launch the newsletter by Friday", AT);
      let pinned = await pager.pinned(ALICE, DM);
      expect(pinned.constraints.map((c) => c.statement)).toEqual([
        "Never spend more than 5 USDC without asking",
      ]);
      expect(pinned.activeGoal).toBe("Launch the newsletter by Friday");
      expect((await pager.pinned(ALICE, DM, "Fix the login bug")).activeGoal).toBe("Fix the login bug");
      await pager.closeGoal(ALICE, goal.id, "done");
      pinned = await pager.pinned(ALICE, DM);
      expect(pinned.activeGoal).toBe("");
      const hits = await pager.fault(ALICE, DM, "newsletter", 500);
      expect(hits.map((h) => h.record)).toEqual([expect.objectContaining({ kind: "goal", status: "done" })]);
    });

    it("recalls up to 16 relevant past turns oldest-first, skipping turns already in the live transcript", async () => {
      const pager = await open("recall");
      for (let i = 0; i < 20; i++) {
        clock += 1000;
        await pager.recordTurn(ALICE, {
          conversation: CONV,
          user: `kubernetes question number ${i}`,
          assistant: `answer ${i}`,
        });
      }
      await pager.recordTurn(ALICE, { conversation: CONV, user: "what is the weather", assistant: "sunny" });
      const turns = await pager.recallTurns(ALICE, DM, "kubernetes question");
      expect(turns).toHaveLength(16);
      expect(turns.map((t) => t.at)).toEqual([...turns.map((t) => t.at)].sort((a, b) => a - b));
      expect(turns.every((t) => t.user.startsWith("kubernetes"))).toBe(true);
      const live = [{ role: "user" as const, content: "kubernetes question number 19" }];
      const deduped = await pager.recallTurns(ALICE, DM, "kubernetes question number 19", { live, max: 50 });
      expect(deduped.map((t) => t.user)).not.toContain("kubernetes question number 19");
      expect(deduped).toHaveLength(19);
    });

    it("recalls turns recorded after an earlier recall, each only where it may be shown, and none once erased", async () => {
      const pager = await open("recall-grows");
      const PUBLIC = { kind: "public", workspace: "guild1" } as const;
      const OTHER = "discord:guild1:chan:thread2";
      const turn = (user: string, learned: typeof DM | typeof PUBLIC, conversation = CONV) => {
        clock += 1000;
        return pager.recordTurn(ALICE, { conversation, user, assistant: "ok", learned });
      };
      const recalled = async (here: typeof DM | typeof PUBLIC) =>
        (await pager.recallTurns(ALICE, here, "deploy key")).map((t) => t.user);
      await turn("rotate the deploy key", PUBLIC);
      expect(await recalled(PUBLIC)).toEqual(["rotate the deploy key"]);
      expect(await recalled(DM)).toEqual(["rotate the deploy key"]);
      // The views read above are the ones these turns are appended to.
      await turn("the deploy key is in the vault", DM, OTHER);
      await turn("the deploy key for staging", PUBLIC, OTHER);
      expect(await recalled(PUBLIC)).toEqual(["rotate the deploy key", "the deploy key for staging"]);
      expect(await recalled(DM)).toEqual([
        "rotate the deploy key",
        "the deploy key is in the vault",
        "the deploy key for staging",
      ]);
      // Erasing a record learned in OTHER erases that conversation's turns up to then.
      const fact = await pager.rememberFact(ALICE, "The vault is at vault.example", {
        conversation: OTHER,
        learned: DM,
      });
      expect(await pager.forgetRecord(ALICE, fact.id)).toBe(true);
      await turn("a new deploy key", PUBLIC);
      expect(await recalled(PUBLIC)).toEqual(["rotate the deploy key", "a new deploy key"]);
      expect(await recalled(DM)).toEqual(["rotate the deploy key", "a new deploy key"]);
    });

    it("forgets everything about one user and exports one user's records", async () => {
      const pager = await open("forget");
      await pager.rememberUserFact(ALICE, "Alice's cat is called Miso");
      await pager.rememberFact(ALICE, "Alice's repo is github.com/alice/miso");
      await pager.recordTurn(ALICE, { conversation: CONV, user: "my cat is Miso", assistant: "noted" });
      await pager.rememberUserFact(BOB, "Bob likes tea");
      const exported = await pager.exportUser(ALICE);
      expect(exported.user).toBe(ALICE);
      expect(exported.records.map((r) => r.kind).sort()).toEqual(["fact", "user_fact"]);
      expect(exported.turns).toHaveLength(1);
      expect(JSON.stringify(exported)).not.toContain("tea");

      expect(await pager.forgetUser(ALICE)).toBe(3); // two records and one turn
      expect(await store.keys(cortexKeys(ALICE).root)).toEqual([]);
      expect(await pager.records(ALICE)).toEqual([]);
      expect(await pager.recallTurns(ALICE, DM, "cat Miso")).toEqual([]);
      expect((await pager.pinned(BOB, DM)).profile.map((p) => p.statement)).toEqual(["Bob likes tea"]);
    });

    it("never returns another user's records", async () => {
      const pager = await open("isolation");
      await pager.rememberUserFact(ALICE, "Alice's wallet is 0xA11CE0000000000000000000000000000000beef");
      await pager.rememberFact(ALICE, "Alice's wallet holds 300 USDC");
      await pager.reinforcePattern(ALICE, {
        name: "check wallet",
        trigger: "wallet balance",
        steps: ["call balance"],
      });
      await pager.recordTurn(ALICE, {
        conversation: CONV,
        user: "what is my wallet balance",
        assistant: "300 USDC",
      });
      const q = "what is my wallet balance";
      expect(await pager.fault(BOB, DM, q, 5000)).toEqual([]);
      expect(await pager.faultPatterns(BOB, DM, q)).toEqual([]);
      expect(await pager.recallTurns(BOB, DM, q)).toEqual([]);
      expect(await pager.pinned(BOB, DM)).toEqual({ constraints: [], profile: [], activeGoal: "" });
      expect((await pager.exportUser(BOB)).records).toEqual([]);
      expect((await pager.fault(ALICE, DM, q, 5000)).length).toBeGreaterThan(0);
    });

    it("keeps its in-process cache valid when another instance writes or forgets", async () => {
      const one = await open("instances");
      const two = createPager({ store: backend && (await secondStore()), now });
      await one.rememberFact(ALICE, "The build server is ci-7");
      expect((await two.fault(ALICE, DM, "build server", 500)).map((h) => recordLine(h.record))).toEqual([
        "The build server is ci-7",
      ]);
      await one.rememberFact(ALICE, "The build cache lives on ci-8");
      expect(await two.fault(ALICE, DM, "build", 500)).toHaveLength(2);
      await one.forgetUser(ALICE);
      expect(await two.fault(ALICE, DM, "build", 500)).toEqual([]);
      await one.rememberFact(ALICE, "Fresh start: build server is ci-9");
      await one.rememberFact(ALICE, "Second fact after forgetting about build");
      expect((await two.fault(ALICE, DM, "build", 500)).map((h) => recordLine(h.record)).sort()).toEqual([
        "Fresh start: build server is ci-9",
        "Second fact after forgetting about build",
      ]);
    });

    it("forgets one record (and the exchanges it came from) for every instance; narrows and widens one", async () => {
      const one = await open("forget-one");
      const two = createPager({ store: await secondStore(), now });
      const other = { conversation: "discord:guild1:chan:thread2", learned: DM } as const;
      // What is forgotten is never the head of a list: a view could not tell it by the head.
      await one.recordTurn(ALICE, {
        conversation: other.conversation,
        user: "my locker is blue",
        assistant: "ok",
      });
      await one.recordTurn(ALICE, { conversation: CONV, user: "my locker code is 4411", assistant: "ok" });
      clock += 1000;
      const keep = await one.rememberFact(ALICE, "Alice's locker is blue", other);
      const gone = await one.rememberFact(ALICE, "Alice's locker code is 4411", AT);
      // The second instance holds a view with both, and the exchange the code came from.
      expect(await two.fault(ALICE, DM, "locker", 500)).toHaveLength(2);
      expect(await two.recallTurns(ALICE, DM, "locker code")).toHaveLength(2);
      expect(await one.forgetRecord(ALICE, gone.id)).toBe(true);
      expect(await one.forgetRecord(BOB, keep.id)).toBe(false);
      expect((await two.fault(ALICE, DM, "locker", 500)).map((h) => h.record.id)).toEqual([keep.id]);
      expect((await two.recallTurns(ALICE, DM, "locker code")).map((t) => t.user)).toEqual([
        "my locker is blue",
      ]);
      expect(JSON.stringify(await store.range(cortexKeys(ALICE).records, 0, -1))).not.toContain("4411");
      expect(JSON.stringify(await store.range(cortexKeys(ALICE).turns, 0, -1))).not.toContain("4411");
      // Widened, it is seen in a public channel; narrowed again, it is not.
      const PUBLIC = { kind: "public", workspace: "guild1" } as const;
      expect(await two.fault(ALICE, PUBLIC, "locker", 500)).toEqual([]);
      expect((await one.setEverywhere(ALICE, keep.id, true))?.learned?.everywhere).toBe(true);
      expect(await two.fault(ALICE, PUBLIC, "locker", 500)).toHaveLength(1);
      expect((await one.setEverywhere(ALICE, keep.id, false))?.learned).toEqual(DM);
      expect(await two.fault(ALICE, PUBLIC, "locker", 500)).toEqual([]);
      // Told again everywhere, it is a record of its own, not the narrowed one.
      const wide = { conversation: CONV, learned: { ...DM, everywhere: true } };
      expect((await two.rememberFact(ALICE, "Alice's locker is blue", wide)).id).not.toBe(keep.id);
    });

    it("skips a record that fails validation on read and keeps the rest", async () => {
      const pager = await open("validation");
      await pager.rememberFact(ALICE, "valid fact about llamas");
      await store.append(cortexKeys(ALICE).records, [{ id: "x", kind: "fact", statement: 42 }]);
      await store.set(cortexKeys(ALICE).version, "changed-by-hand");
      await pager.rememberFact(ALICE, "another valid fact about llamas");
      expect(await pager.fault(ALICE, DM, "llamas", 500)).toHaveLength(2);
    });

    it("faults records written before a restart after it", async () => {
      const pager = await open("restart");
      await pager.rememberUserFact(ALICE, "Alice's timezone is Europe/Lisbon");
      await pager.rememberFact(ALICE, "The API gateway is api.example.net");
      await pager.recordTurn(ALICE, {
        conversation: CONV,
        user: "where is the API gateway",
        assistant: "api.example.net",
      });
      await store.close();
      store = await backend.open();
      const after = createPager({ store, now });
      expect((await after.pinned(ALICE, DM)).profile.map((p) => p.statement)).toEqual([
        "Alice's timezone is Europe/Lisbon",
      ]);
      expect((await after.fault(ALICE, DM, "API gateway", 500)).map((h) => recordLine(h.record))).toEqual([
        "The API gateway is api.example.net",
      ]);
      expect(await after.recallTurns(ALICE, DM, "API gateway")).toHaveLength(1);
    });

    /** Redis: a second connection over the same prefix. File: the same store (one process owns a dir). */
    async function secondStore(): Promise<Store> {
      return store.kind === "redis" ? backend.open() : store;
    }
  });
}
