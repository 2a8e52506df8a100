/**
 * Server lifecycle against real stdio servers: a crash mid-call, restart on the next call with
 * bounded attempts, per-call timeouts, cancellation, missing `${VAR}`s, reload and close.
 */
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { getEventListeners } from "node:events";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadManifest, parseManifest } from "../../src/core/tools/manifest.js";
import { createToolSurface, type McpToolSurface } from "../../src/core/tools/surface.js";
import { userFolderName } from "../../src/core/tools/tool-server.js";
import { ToolTransportError } from "../../src/core/tools/types.js";
import { fixture, ref, tempDir, testContext } from "./helpers.js";

const ctx = testContext();
const open: McpToolSurface[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function surfaceWith(
  servers: Record<string, unknown>,
  extra: { callTimeoutMs?: number; maxRestarts?: number; env?: Record<string, string> } = {},
) {
  const s = await createToolSurface({
    manifest: parseManifest({ servers }),
    resultMaxChars: 10_000,
    callTimeoutMs: extra.callTimeoutMs ?? 20_000,
    ...(extra.maxRestarts !== undefined ? { maxRestarts: extra.maxRestarts } : {}),
    ...(extra.env ? { env: extra.env } : {}),
  });
  open.push(s);
  return s;
}

function pidOf(content: string): number {
  return Number(/pid (\d+)/.exec(content)![1]);
}

describe("crash and restart", () => {
  it("fails the call that crashed the server, restarts it on the next call, and warns", async () => {
    const s = await surfaceWith({ crasher: fixture("crasher") });
    const first = await s.dispatch("crasher__echo", { text: "a" }, ctx);
    await expect(s.dispatch("crasher__crash", {}, ctx)).rejects.toBeInstanceOf(ToolTransportError);
    expect(s.servers()[0]!.status).toBe("dead");
    const second = await s.dispatch("crasher__echo", { text: "b" }, ctx);
    expect(second.content).toMatch(/^b \(pid \d+\)$/);
    expect(pidOf(second.content)).not.toBe(pidOf(first.content));
    expect(s.servers()[0]).toMatchObject({ status: "ready", restarts: 1 });
    const warnings = s.warnings().map((w) => w.message);
    expect(
      warnings.some((w) => /died; it will be restarted on its next call .*exiting mid-call/.test(w)),
    ).toBe(true);
    expect(warnings.some((w) => /restarting \(attempt 1 of 3\)/.test(w))).toBe(true);
  });

  it("gives up after the bounded number of restart attempts, until reload", async () => {
    const refuse = join(tempDir("refuse"), "refuse");
    const s = await surfaceWith(
      { crasher: fixture("crasher", { CRASHER_REFUSE_FILE: refuse }) },
      { maxRestarts: 2 },
    );
    writeFileSync(refuse, "");
    await expect(s.dispatch("crasher__crash", {}, ctx)).rejects.toBeInstanceOf(ToolTransportError);
    await expect(s.dispatch("crasher__echo", { text: "x" }, ctx)).rejects.toThrow(/is dead/);
    await expect(s.dispatch("crasher__echo", { text: "x" }, ctx)).rejects.toThrow(
      /gave up after 2 restart attempts/,
    );
    await expect(s.dispatch("crasher__echo", { text: "x" }, ctx)).rejects.toThrow(
      /is failed: .*reload to try again/,
    );
    expect(s.servers()[0]).toMatchObject({ status: "failed", restarts: 2 });
    rmSync(refuse);
    await s.reload();
    expect(s.servers()[0]).toMatchObject({ status: "ready", restarts: 0 });
    expect(s.warnings()).toEqual([]);
    expect((await s.dispatch("crasher__echo", { text: "back" }, ctx)).content).toMatch(/^back/);
  });
});

describe("timeouts", () => {
  it("times a call out as a transport error and keeps the server serving", async () => {
    const s = await surfaceWith({ crasher: fixture("crasher") }, { callTimeoutMs: 400 });
    const err = await s.dispatch("crasher__hang", {}, ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolTransportError);
    expect((err as ToolTransportError).message).toMatch(/crasher__hang failed: timed out after 400 ms/);
    expect((err as ToolTransportError).tool).toBe("crasher__hang");
    expect((await s.dispatch("crasher__echo", { text: "still" }, ctx)).content).toMatch(/^still/);
  });

  it("bounds a server that never finishes initialize by its spawn timeout while the others serve", async () => {
    const s = await surfaceWith({
      wallet: fixture("wallet"),
      stuck: { ...fixture("never-starts"), spawnTimeoutMs: 800 },
    });
    expect(s.servers().map((x) => [x.alias, x.status])).toEqual([
      ["wallet", "ready"],
      ["stuck", "failed"],
    ]);
    expect(s.warnings()).toMatchObject([{ server: "stuck", message: expect.stringContaining("800 ms") }]);
    expect((await s.dispatch("wallet__get_balance", { asset: "ETH" }, ctx)).content).toBe("ETH: 2");
  });

  it("stops the process of a server that timed out at spawn (it must not outlive Neo)", async () => {
    const marker = `never-starts-${randomUUID()}`;
    const stuck = fixture("never-starts");
    const args = "args" in stuck ? (stuck.args ?? []) : [];
    const s = await surfaceWith({ stuck: { ...stuck, args: [...args, marker], spawnTimeoutMs: 800 } });
    expect(s.servers()[0]!.status).toBe("failed");
    const running = () =>
      execFileSync("ps", ["-eo", "args"])
        .toString()
        .split("\n")
        .filter((l) => l.includes(marker));
    const deadline = Date.now() + 1500;
    while (running().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(running()).toEqual([]);
  });
});

describe("cancellation", () => {
  /** Ask the crasher until `hangs` reports `want`: each ask is a round trip, so no sleeping. */
  async function hangsUntil(s: McpToolSurface, want: string): Promise<void> {
    let last = "";
    for (let i = 0; i < 1000 && last !== want; i++)
      last = (await s.dispatch("crasher__hangs", {}, ctx)).content;
    expect(last).toBe(want);
  }

  it("cancels on the server exactly the running calls of the turn that was cancelled", async () => {
    const s = await surfaceWith({ crasher: fixture("crasher") });
    const a = new AbortController();
    const b = new AbortController();
    const turnA = testContext(a.signal);
    const turnB = testContext(b.signal);
    // Both turns have finished calls behind them: only running calls are cancelled.
    for (let i = 0; i < 70; i++) await s.dispatch("crasher__echo", { text: `a${i}` }, turnA);
    await s.dispatch("crasher__echo", { text: "b" }, turnB);
    const hangA = s.dispatch("crasher__hang", {}, turnA).catch((e: unknown) => e);
    const hangB = s.dispatch("crasher__hang", {}, turnB).catch((e: unknown) => e);
    await hangsUntil(s, "running=2 cancelled=0");

    a.abort("reset");
    const errA = await hangA;
    expect(errA).toBeInstanceOf(ToolTransportError);
    expect((errA as Error).message).toBe("crasher__hang failed: cancelled");
    await hangsUntil(s, "running=1 cancelled=1");
    // The server hears why: the turn's abort reason.
    expect((await s.dispatch("crasher__last_cancel", {}, ctx)).content).toBe("reset");

    b.abort("cancel");
    expect(await hangB).toBeInstanceOf(ToolTransportError);
    await hangsUntil(s, "running=0 cancelled=2");
    expect((await s.dispatch("crasher__echo", { text: "after" }, ctx)).content).toMatch(/^after/);
  });

  it("adds one abort listener to a turn's signal however many calls the turn makes, and no warning", async () => {
    const s = await surfaceWith({ crasher: fixture("crasher") });
    const turn = new AbortController();
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on("warning", onWarning);
    try {
      for (let i = 0; i < 100; i++)
        await s.dispatch("crasher__echo", { text: `${i}` }, testContext(turn.signal));
      const batch = Array.from({ length: 40 }, (_, i) =>
        s.dispatch("crasher__echo", { text: `p${i}` }, testContext(turn.signal)),
      );
      expect((await Promise.all(batch)).every((r) => !r.isError)).toBe(true);
      await new Promise((r) => setImmediate(r)); // warnings are emitted on the next tick
      expect(getEventListeners(turn.signal, "abort").length).toBe(1);
      expect(warnings).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });
});

describe("manifest environment", () => {
  it("skips a server whose placeholder variable is unset with a warning naming the variable", async () => {
    const s = await surfaceWith(
      {
        wallet: fixture("wallet"),
        secret: { ...fixture("wallet"), env: { API_KEY: ref("NEO_TEST_UNSET_KEY") } },
      },
      { env: { PATH: process.env.PATH ?? "" } },
    );
    expect(s.servers().find((x) => x.alias === "secret")!.status).toBe("failed");
    expect(s.warnings()[0]!.message).toContain("env.API_KEY needs environment variable NEO_TEST_UNSET_KEY");
    expect(s.tools().every((t) => t.server === "wallet")).toBe(true);
  });

  it("passes env explicitly to stdio servers", async () => {
    const log = join(tempDir("env"), "w.jsonl");
    const s = await surfaceWith(
      { wallet: fixture("wallet", { WALLET_LOG: ref("LOG_PATH") }) },
      {
        env: { LOG_PATH: log },
      },
    );
    const r = await s.dispatchPrivileged("wallet__swap", { amount: "1", from: "ETH", to: "USDC" }, ctx);
    expect(r.content).toMatch(/swapped 1 ETH for USDC: tx 0x[0-9a-f]{64}/);
    const { readFileSync } = await import("node:fs");
    expect(readFileSync(log, "utf8").trim().split("\n")).toHaveLength(1);
  });
});

describe("close", () => {
  it("stops every server; later calls are transport errors", async () => {
    const s = await surfaceWith({ crasher: fixture("crasher") });
    await s.close();
    expect(s.servers()).toEqual([]);
    expect(await s.dispatch("crasher__echo", { text: "x" }, ctx)).toEqual({
      content: 'unknown tool "crasher__echo" — it is not available',
      isError: true,
    });
  });
});

describe("agents/default.json", () => {
  it("is valid and boots on a fresh data directory with its filesystem server serving each user their own folder", async () => {
    const data = join(tempDir("default"), "data");
    const s = await createToolSurface({
      manifest: await loadManifest("agents/default.json"),
      env: { ...process.env, NEO_DATA_DIR: data },
      resultMaxChars: 10_000,
      callTimeoutMs: 20_000,
    });
    open.push(s);
    expect(s.warnings()).toEqual([]);
    expect(s.servers()).toMatchObject([{ alias: "fs", status: "ready", scope: "user", instances: 0 }]);
    const listed = await s.dispatch("fs__list_allowed_directories", {}, ctx);
    expect(listed.content).toContain(join(data, "users", userFolderName(ctx.speaker.userKey), "files"));
  });
});
