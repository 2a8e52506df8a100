/**
 * Per-user tool servers (`"scope": "user"` in the manifest), against real stdio servers: the tools
 * are listed at start without any user process running; each user's calls go to their own process,
 * spawned on their first call with `${NEO_USER_DIR}` resolved to their own folder; an idle process
 * is stopped (and really exits); a user whose process cannot start does not hold up anyone else.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseManifest } from "../../src/core/tools/manifest.js";
import { createToolSurface, type McpToolSurface } from "../../src/core/tools/surface.js";
import { userFolderName } from "../../src/core/tools/tool-server.js";
import { ToolTransportError } from "../../src/core/tools/types.js";
import { fixture, ref, tempDir, testContext } from "./helpers.js";

const ANN = "slack:T1:UANN";
const BOB = "slack:T1:UBOB";
const CY = "discord:G1:300000000000000001";
const DEE = "slack:T1:UDEE";

const open: McpToolSurface[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

const ctxFor = (userKey: string) => ({ ...testContext(), speaker: { userKey, displayName: userKey } });
const pidOf = (content: string) => Number(/pid (\d+)/.exec(content)![1]);
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The crasher fixture, one process per user; it refuses to start when its user's folder says so. */
async function perUserCrasher(data: string, userIdleMs: number, userMaxProcesses?: number) {
  const crasher = fixture("crasher", { CRASHER_REFUSE_FILE: `${ref("NEO_USER_DIR")}/refuse` });
  const s = await createToolSurface({
    manifest: parseManifest({
      usersDir: `${ref("NEO_DATA_DIR")}/users`,
      servers: { c: { ...crasher, scope: "user", createDirs: [ref("NEO_USER_DIR")] } },
    }),
    env: { ...process.env, NEO_DATA_DIR: data },
    resultMaxChars: 10_000,
    callTimeoutMs: 20_000,
    userIdleMs,
    ...(userMaxProcesses ? { userMaxProcesses } : {}),
  });
  open.push(s);
  return s;
}

const echo = async (s: McpToolSurface, user: string, signal?: AbortSignal) =>
  pidOf(
    (await s.dispatch("c__echo", { text: "hi" }, { ...ctxFor(user), ...(signal ? { signal } : {}) })).content,
  );

/** A call that runs until `ctl` aborts it: the user's process stays busy meanwhile. */
const hang = (s: McpToolSurface, user: string, ctl: AbortController) =>
  s.dispatch("c__hang", {}, { ...ctxFor(user), signal: ctl.signal }).catch((e: unknown) => e);

describe("per-user tool servers", () => {
  it("lists the tools with no user process running, then runs each user's calls in their own process", async () => {
    const data = tempDir("user-scope");
    const s = await perUserCrasher(data, 60_000);
    expect(s.servers()).toMatchObject([{ alias: "c", status: "ready", scope: "user", instances: 0 }]);
    expect(s.schemas().map((t) => t.function.name)).toContain("c__echo");

    const ann = await echo(s, ANN);
    const bob = await echo(s, BOB);
    expect(bob).not.toBe(ann);
    expect(await echo(s, ANN)).toBe(ann);
    // Two first calls at once share one start.
    const [c1, c2] = await Promise.all([echo(s, CY), echo(s, CY)]);
    expect(c1).toBe(c2);
    // A Discord person has one process across guilds and DMs (one folder, as one cortex).
    expect(await echo(s, "discord:@me:300000000000000001")).toBe(c1);
    expect(s.servers()[0]).toMatchObject({ instances: 3 });
    // Each user's folder was made under the data directory.
    for (const u of [ANN, BOB, CY]) expect(existsSync(join(data, "users", userFolderName(u)))).toBe(true);

    await s.close();
    for (const pid of [ann, bob, c1]) await until(() => !alive(pid), `process ${pid} to exit on close`);
  });

  it("stops a user's process when idle, and starts it again on their next call", async () => {
    const s = await perUserCrasher(tempDir("user-idle"), 300);
    const first = await echo(s, ANN);
    await until(() => s.servers()[0]!.instances === 0, "the idle process to be stopped");
    await until(() => !alive(first), "the idle process to exit");
    const again = await echo(s, ANN);
    expect(again).not.toBe(first);
    expect(alive(again)).toBe(true);
  });

  it("keeps at most NEO_TOOL_USER_MAX_PROCESSES: a new user's call stops the least recently used idle process", async () => {
    const s = await perUserCrasher(tempDir("user-cap"), 60_000, 2);
    const ann = await echo(s, ANN);
    const bob = await echo(s, BOB);
    expect(await echo(s, ANN)).toBe(ann); // Ann used last: Bob is now the least recent
    const cy = await echo(s, CY);
    await until(() => !alive(bob), "Bob's idle process to be stopped for Cy's");
    expect(alive(ann)).toBe(true);
    expect(s.servers()[0]).toMatchObject({ instances: 2, waiting: 0 });
    // Bob comes back: Ann's is now the least recent (Cy's call came after hers).
    const bob2 = await echo(s, BOB);
    expect(bob2).not.toBe(bob);
    await until(() => !alive(ann), "Ann's idle process to be stopped for Bob's");
    expect(alive(cy)).toBe(true);
    expect(s.servers()[0]).toMatchObject({ instances: 2 });
  });

  it("when every process is busy, a new user's call waits in order for one to finish; a cancelled wait leaves the line", async () => {
    const s = await perUserCrasher(tempDir("user-busy"), 60_000, 2);
    const annCtl = new AbortController();
    const bobCtl = new AbortController();
    const annHang = hang(s, ANN, annCtl);
    const bobHang = hang(s, BOB, bobCtl);
    expect(s.servers()[0]).toMatchObject({ instances: 2 });
    const pids = new Map<string, number>();
    const order: string[] = [];
    const cyCall = echo(s, CY).then((pid) => {
      order.push("cy");
      pids.set("cy", pid);
    });
    // Cy's second call waits too, and runs in the process his first call gets.
    const cyAgain = echo(s, CY);
    const deeCtl = new AbortController();
    const deeCall = echo(s, DEE, deeCtl.signal).catch((e: unknown) => e);
    const eveCall = echo(s, "slack:T1:UEVE").then((pid) => {
      order.push("eve");
      pids.set("eve", pid);
    });
    await until(() => s.servers()[0]!.waiting === 4, "four calls waiting for room");
    expect(s.servers()[0]).toMatchObject({ instances: 2 });

    deeCtl.abort();
    expect(await deeCall).toBeInstanceOf(ToolTransportError);
    expect(s.servers()[0]).toMatchObject({ waiting: 3 });

    annCtl.abort(); // Ann's call ends: her idle process makes room for the first in line
    await annHang;
    await cyCall;
    expect(await cyAgain).toBe(pids.get("cy"));
    // Cy's call done, his process is idle in turn: the next in line takes its room (Bob's is busy).
    await eveCall;
    expect(order).toEqual(["cy", "eve"]);
    expect(pids.get("cy")).not.toBe(pids.get("eve"));
    await until(() => !alive(pids.get("cy")!), "Cy's idle process to be stopped for Eve's");
    expect(s.servers()[0]).toMatchObject({ instances: 2, waiting: 0 });
    bobCtl.abort();
    await bobHang;
  });

  it("a user whose process cannot start gets a transport error; others are served; a later call retries", async () => {
    const data = tempDir("user-fail");
    const s = await perUserCrasher(data, 60_000);
    const deeDir = join(data, "users", userFolderName(DEE));
    mkdirSync(deeDir, { recursive: true });
    writeFileSync(join(deeDir, "refuse"), "");
    await expect(s.dispatch("c__echo", { text: "hi" }, ctxFor(DEE))).rejects.toBeInstanceOf(
      ToolTransportError,
    );
    expect(await echo(s, ANN)).toBeGreaterThan(0);
    rmSync(join(deeDir, "refuse"));
    expect(await echo(s, DEE)).toBeGreaterThan(0);
  });

  it("refuses a user-folder placeholder in a shared server, naming the server", () => {
    expect(() =>
      parseManifest({
        servers: { fs: { command: "node", args: [`${ref("NEO_USER_DIR")}/files`] } },
      }),
    ).toThrow(/server "fs".*NEO_USER_DIR.*"scope": "user"/);
    // Per user means a process per user: an HTTP server has no process of ours to split.
    expect(() =>
      parseManifest({ servers: { web: { url: "https://mcp.example.com/mcp", scope: "user" } } }),
    ).toThrow(/server "web"/);
  });

  it("names user folders safely and distinctly", () => {
    const names = ["slack:T1:U_A", "slack:T1_U:A", "slack:T1:../../etc", "console:local:me"].map(
      userFolderName,
    );
    for (const n of names) expect(n).toMatch(/^[A-Za-z0-9._-]+$/);
    expect(names.every((n) => !n.startsWith("."))).toBe(true);
    expect(new Set(names).size).toBe(names.length);
    expect(userFolderName("discord:G1:42")).toBe(userFolderName("discord:@me:42"));
  });

  it("an erasure stops the user's process and deletes their folder; others keep theirs", async () => {
    const data = tempDir("user-scope-erase");
    const s = await perUserCrasher(data, 60_000);
    const ann = await echo(s, ANN);
    await echo(s, BOB);
    const annDir = join(data, "users", userFolderName(ANN));
    const bobDir = join(data, "users", userFolderName(BOB));
    writeFileSync(join(annDir, "notes.txt"), "ann's notes: heron-5512");
    await s.eraseUser(ANN);
    expect(existsSync(annDir)).toBe(false);
    expect(alive(ann)).toBe(false);
    expect(existsSync(bobDir)).toBe(true);
    expect(s.servers()[0]).toMatchObject({ instances: 1 });
    // Her next call starts afresh, in a new empty folder.
    expect(await echo(s, ANN)).not.toBe(ann);
    expect(existsSync(join(annDir, "notes.txt"))).toBe(false);
  });
});

/** Poll a condition a process event settles (exit), bounded. */
async function until(cond: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
