/** The platform-free `/neo` layer: parsing and running against real access policy and store. */

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAdminCheck } from "../../src/core/access/admin.js";
import { type AccessPolicy, createAccessPolicy } from "../../src/core/access/policy.js";
import { createChannelSettings } from "../../src/core/channels/index.js";
import {
  encodeMemoryAction,
  type MemoryItem,
  parseCommand,
  parseMemoryAction,
  runCommand,
  runConfirmed,
  runMemoryAction,
} from "../../src/core/commands/index.js";
import type { CommandContext, CommandDeps } from "../../src/core/commands/types.js";
import { createUsageLedger } from "../../src/core/llm/usage-ledger.js";
import { createUsageTracker } from "../../src/core/usage/index.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/types.js";
import { channelCommands, usageCommands } from "../support/usage-commands.js";

describe("parseCommand", () => {
  it.each([
    ["", { name: "help" }],
    ["help", { name: "help" }],
    ["ASK what is  up?", { name: "ask", text: "what is  up?" }],
    ["memory", { name: "memory" }],
    ["memory EXPORT", { name: "memory", export: true }],
    ["reset", { name: "reset" }],
    [
      "reset https://x/archives/C1/p1700000000000100",
      { name: "reset", target: "https://x/archives/C1/p1700000000000100" },
    ],
    ["approvals", { name: "approvals", action: "list" }],
    ["approvals cancel apv_1", { name: "approvals", action: "cancel", id: "apv_1" }],
    ["deny <@U1>", { name: "deny", user: "<@U1>" }],
    ["limit <@U1> 25.5 usdc", { name: "limit", user: "<@U1>", amount: "25.5", asset: "USDC" }],
    ["limit <@U1> 10", { name: "limit", user: "<@U1>", amount: "10" }],
    ["dance", { name: "unknown", given: "dance" }],
  ])("%j", (input, expected) => {
    expect(parseCommand(input)).toEqual(expected);
  });

  it.each([
    ["ask", "what should I answer"],
    ["limit <@U1> ten", "plain decimal"],
    ["limit <@U1>", "needs a user and an amount"],
    ["deny", "exactly one user"],
    ["status now", "takes no arguments"],
    ["memory everything", "nothing, or `export`"],
    ["approvals cancel", "exactly one approval id"],
  ])("%j is invalid, saying why", (input, why) => {
    const c = parseCommand(input);
    expect(c.name).toBe("invalid");
    expect(c.name === "invalid" && c.message).toContain(why);
  });
});

describe("runCommand", () => {
  let store: Store;
  let deps: CommandDeps;
  let access: AccessPolicy;
  const resets: string[] = [];
  const caps: unknown[] = [];
  const revoked: unknown[] = [];
  const forgotten: string[] = [];
  let tea: MemoryItem[] = [];
  beforeEach(async () => {
    tea = Array.from({ length: 12 }, (_, n) => ({
      id: `rec-${n}`,
      kind: "fact" as const,
      text: n === 0 ? "likes tea" : `fact number ${n}`,
      place: "dm" as const,
      updatedAt: 1000 - n,
    }));
    store = await createStore({ dataDir: mkdtempSync(join(tmpdir(), "neo-cmd-")), prefix: "neo:" });
    access = createAccessPolicy({ store, isAdmin: createAdminCheck(["UADMIN"]) });
    deps = {
      conversations: {
        reset: async (c) => {
          resets.push(c);
        },
        // Ann spoke in every thread; Bob in none.
        spokeIn: async (_c, u) => u === "slack:T1:UANN",
        compact: async () => {},
        stats: () => ({ active: 2, running: 1, queued: 3, waitingForSlot: 0, throttledUsers: 1 }),
      },
      memory: {
        list: async (u) => (u === "slack:T1:UANN" ? tea.map((t) => ({ ...t })) : []),
        forgetOne: async (u, id) => {
          const i = tea.findIndex((t) => t.id === id);
          if (u !== "slack:T1:UANN" || i < 0) return false;
          tea.splice(i, 1);
          return true;
        },
        setEverywhere: async (u, id, everywhere) => {
          const t = tea.find((x) => x.id === id);
          if (u !== "slack:T1:UANN" || !t) return false;
          t.place = everywhere ? "everywhere" : "dm";
          return true;
        },
        forget: async (u) => {
          forgotten.push(u);
          return 4;
        },
        export: async (u) => ({ user: u, facts: tea }),
      },
      tools: {
        list: () => ({ natural: ["fs__read"], escalate: ["wallet__send"] }),
        servers: () => [
          { name: "fs", ok: true, tools: 1 },
          { name: "wallet", ok: false, tools: 0, warning: "spawn failed" },
        ],
        reload: async () => ["wallet: spawn failed"],
      },
      approvals: {
        pending: async () => [],
        cancel: async () => ({ ok: false, reason: "unknown", message: "no such approval" }),
        revokeUser: async (user, by, note) => {
          revoked.push([user, by, note]);
          return 1;
        },
        cancelConversation: async (conv, by, note) => {
          revoked.push([conv, by, note]);
          return 0;
        },
      },
      access,
      caps: {
        setLimit: async (...args) => {
          caps.push(args);
        },
      },
      channels: channelCommands(createChannelSettings(store)),
      usage: usageCommands(createUsageTracker({ store, ledger: createUsageLedger() })),
      system: {
        models: () => ({ main: "m", cheap: "c" }),
        store: async () => ({
          kind: store.kind,
          healthy: true,
          size: await store.size(),
          retention: { conversationDays: 0.5, auditDays: 2, memoryDays: 90 },
        }),
      },
    };
  });
  afterEach(async () => {
    await store.close();
  });

  const ctx = (user: string, isAdmin: boolean): CommandContext => ({
    caller: `slack:T1:${user}`,
    isAdmin,
    resolveUser: (raw) => (/^<@(U\w+)>$/.exec(raw) ? `slack:T1:${/^<@(U\w+)>$/.exec(raw)![1]}` : undefined),
    resolveConversation: (t) => (t ? "slack:T1:C1:1.1" : undefined),
  });
  const text = async (input: string, c: CommandContext) => {
    const r = await runCommand(parseCommand(input), c, deps);
    if (r.kind !== "reply") throw new Error("expected a reply");
    expect(r.ephemeral).toBe(true);
    return r.text;
  };

  it("an admin's /neo forget <user> asks to confirm and erases that user; nobody else can, not even with a forged button", async () => {
    forgotten.length = 0;
    const admin = ctx("UADMIN", true);
    const bob = ctx("UBOB", false);
    expect(await text("forget <@UANN>", bob)).toMatch(/admins only/);
    const asked = await runCommand(parseCommand("forget <@UANN>"), admin, deps);
    expect(asked).toMatchObject({ kind: "reply", confirm: { action: "forget:slack:T1:UANN" } });
    expect(forgotten).toEqual([]);
    // The button's value comes back from the platform: a non-admin pressing it (or sending it) erases nothing.
    expect(await runConfirmed("forget:slack:T1:UANN", bob, deps)).toMatchObject({
      text: expect.stringContaining("Only Neo admins"),
    });
    for (const forged of [
      "forget:",
      "forget:slack:T1",
      "forget:slack:T1:UANN:x",
      "forget:slack:T1:U ANN",
      "forgetslack:T1:UANN",
    ])
      expect(await runConfirmed(forged, admin, deps), forged).toMatchObject({
        text: "That button no longer does anything.",
      });
    expect(forgotten).toEqual([]);
    expect(await runConfirmed("forget:slack:T1:UANN", admin, deps)).toMatchObject({
      text: "Forgotten: 4 record(s) about `slack:T1:UANN` are gone.",
    });
    expect(forgotten).toEqual(["slack:T1:UANN"]);
    expect(await text("forget someone else", admin)).toMatch(/forget takes nothing, or one user/);
  });

  it("refuses admin commands to non-admins, saying why, and runs them for admins", async () => {
    for (const cmd of [
      "status",
      "tools",
      "approvals",
      "deny <@U2>",
      "limit <@U2> 5",
      "compact x",
      "reload",
    ]) {
      expect(await text(cmd, ctx("UANN", false))).toContain("admins only");
    }
    const status = await text("status", ctx("UADMIN", true));
    expect(status).toContain("`wallet` DOWN — spawn failed");
    expect(status).toContain("1 running, 3 queued");
    expect(status).toMatch(/Store: file, healthy, \d+ keys, \d+\.\d MiB on disk/);
    expect(status).toContain("idle conversations are deleted after 0.5 day(s)");
    expect(status).toContain("approval records and audit after 2 day(s)");
    expect(status).toContain("usage as daily counts for 35 days, monthly for 13 months");
    expect(status).toContain("memory not learned or reinforced for 90 day(s) is dropped");
    expect(await text("tools", ctx("UADMIN", true))).toContain(
      "*Escalate* (1, approval only): `wallet__send`",
    );
  });

  it("deny and allow change who may use Neo; limit reaches the caps", async () => {
    const admin = ctx("UADMIN", true);
    expect(await text("deny <@U2>", admin)).toContain("may no longer");
    expect(await access.isAllowed("slack:T1:U2")).toBe(false);
    await text("allow <@U2>", admin);
    expect(await access.isAllowed("slack:T1:U2")).toBe(true);
    expect(await text("deny bob", admin)).toContain("can't tell who");
    await text("limit <@U2> 25 USDC", admin);
    expect(caps).toEqual([["slack:T1:U2", "25", "USDC", "slack:T1:UADMIN"]]);
    // Deny and the cap change each revoked U2's pending approvals, as the admin.
    expect(revoked).toEqual([
      ["slack:T1:U2", "slack:T1:UADMIN", "Neo access withdrawn by an admin"],
      ["slack:T1:U2", "slack:T1:UADMIN", "spend cap changed by an admin"],
    ]);
    expect(await text("deny <@UADMIN>", admin)).toContain("is an admin and cannot be denied");
  });

  it("memory buttons: the owner forgets, widens and pages; anyone else is refused; forged ids parse to nothing", async () => {
    const ann = ctx("UANN", false);
    const bob = ctx("UBOB", false);
    const forget = parseMemoryAction(
      encodeMemoryAction({ op: "forget", page: 0, owner: "UANN", id: "rec-0" }),
    )!;
    expect(forget).toEqual({ op: "forget", page: 0, owner: "UANN", id: "rec-0" });
    // Bob replays Ann's button, and one naming himself as owner: neither touches Ann's memory.
    expect(await runMemoryAction(forget, bob, deps)).toEqual({
      refused: "Only the person this memory belongs to can change it.",
    });
    const asBob = await runMemoryAction({ ...forget, owner: "UBOB" }, bob, deps);
    expect(asBob).toMatchObject({ view: { note: "That record is no longer in your memory.", total: 0 } });
    expect(tea).toHaveLength(12);
    const done = await runMemoryAction(forget, ann, deps);
    expect(done).toMatchObject({ view: { note: "Forgotten for good.", total: 11 } });
    expect(tea.map((t) => t.id)).not.toContain("rec-0");
    const widened = await runMemoryAction(
      { op: "everywhere", page: 0, owner: "UANN", id: "rec-1" },
      ann,
      deps,
    );
    expect("view" in widened && widened.view.items.find((i) => i.id === "rec-1")?.place).toBe("everywhere");
    const next = await runMemoryAction({ op: "page", page: 1, owner: "UANN" }, ann, deps);
    expect(next).toMatchObject({ view: { page: 1, pages: 2 } });
    for (const bad of [
      "neo:mem:forget:0:UANN",
      "neo:mem:page:0:UANN:rec-1",
      "neo:mem:drop:0:UANN:rec-1",
      "neo:mem:forget:0:U:ANN:rec-1",
      `neo:mem:forget:0:UANN:${"x".repeat(90)}`,
      42,
    ])
      expect(parseMemoryAction(bad)).toBeUndefined();
  });

  it("help, unknown, memory, forget with confirm, reset needing a thread", async () => {
    const ann = ctx("UANN", false);
    expect(await text("help", ann)).not.toContain("*Admin*");
    expect(await text("help", ctx("UADMIN", true))).toContain("*Admin*");
    expect(await text("frobnicate", ann)).toContain("I don't know `frobnicate`");
    const page = await runCommand(parseCommand("memory"), ann, deps);
    expect(page).toMatchObject({ kind: "memory", view: { page: 0, pages: 2, total: 12 } });
    expect(page.kind === "memory" && page.view.items[0]!.text).toBe("likes tea");
    const forget = await runCommand(parseCommand("forget"), ann, deps);
    expect(forget).toMatchObject({ kind: "reply", confirm: { action: "forget" } });
    expect(await runConfirmed("forget", ann, deps)).toMatchObject({
      text: expect.stringContaining("4 record(s)"),
    });
    expect(await text("reset", ann)).toContain("Which thread?");
    await text("reset https://link", ann);
    expect(resets).toEqual(["slack:T1:C1:1.1"]);
    // Bob never spoke in that thread: his reset is refused; an admin's is not.
    expect(await text("reset https://link", ctx("UBOB", false))).toContain("only the people who spoke");
    expect(resets).toEqual(["slack:T1:C1:1.1"]);
    await text("reset https://link", ctx("UADMIN", true));
    expect(resets).toEqual(["slack:T1:C1:1.1", "slack:T1:C1:1.1"]);
    expect(await runCommand(parseCommand("ask hi there"), ann, deps)).toEqual({
      kind: "ask",
      text: "hi there",
    });
    expect(await text("approvals cancel apv_x", ctx("UADMIN", true))).toContain("no such approval");
  });
});
