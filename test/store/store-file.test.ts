/**
 * What only the embedded file store must guarantee: a SIGKILLed process loses nothing that
 * resolved, a torn last line is cut off rather than corrupting the log, one owner per data dir,
 * the log is compacted without losing state, and values past their TTL do not pile up in memory.
 */
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createStore } from "../../src/store/create-store.js";
import { createFileStore } from "../../src/store/file-store.js";
import type { Store } from "../../src/store/types.js";
import { killAfterWrite } from "../memory/support/kill-after-write.js";
import { MB, retainedBytes } from "../support/heap.js";

const dirs: string[] = [];
const stores: Store[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "neo-file-store-"));
  dirs.push(d);
  return d;
}
async function open(dir: string): Promise<Store> {
  const s = await createStore({ dataDir: dir, prefix: "neo:" });
  stores.push(s);
  return s;
}
const logFile = (dir: string) => join(dir, readdirSync(dir).find((f) => f.endsWith(".log"))!);

afterEach(async () => {
  vi.useRealTimers();
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("file store durability", () => {
  it("keeps everything a SIGKILLed process wrote, and takes over its stale lock", async () => {
    const dir = tempDir();
    await killAfterWrite("file-store-writer.ts", [dir]);

    const store = await open(dir);
    expect(await store.get("before-kill")).toEqual({ ok: true });
    expect(await store.range("list", 0, -1)).toEqual([1, 2, 3]);
    expect(await store.incr("counter")).toBe(6);
    expect(await store.setIfAbsent("lock", "parent")).toBe(false);
  });

  it("cuts off a torn final line and keeps appending cleanly after it", async () => {
    const dir = tempDir();
    const first = await open(dir);
    await first.set("a", 1);
    await first.append("l", ["x"]);
    await first.close();
    appendFileSync(logFile(dir), '{"o":"set","k":"b","v":"2"'); // killed mid-write
    const second = await open(dir);
    expect(await second.get("a")).toBe(1);
    expect(await second.get("b")).toBeUndefined();
    await second.append("l", ["y"]);
    await second.close();
    const third = await open(dir);
    expect(await third.range("l", 0, -1)).toEqual(["x", "y"]);
  });

  it("refuses a corrupt middle line with an error naming the file and line, and changes nothing", async () => {
    const dir = tempDir();
    const first = await open(dir);
    await first.set("a", 1);
    await first.close();
    const path = logFile(dir);
    const good = readFileSync(path, "utf8");
    writeFileSync(path, `${good}garbage\n${good}`);
    await expect(createStore({ dataDir: dir, prefix: "neo:" })).rejects.toThrow(/line 2 is not valid JSON/);
    expect(readFileSync(path, "utf8")).toBe(`${good}garbage\n${good}`);
  });

  it("allows one open store per data dir and prefix in a process", async () => {
    const dir = tempDir();
    await open(dir);
    await expect(createStore({ dataDir: dir, prefix: "neo:" })).rejects.toThrow(/already open/);
    const other = await createStore({ dataDir: dir, prefix: "other:" });
    stores.push(other);
    expect(other.healthy()).toBe(true);
  });

  it("compacts a bloated log without losing state", async () => {
    const dir = tempDir();
    const store = await open(dir);
    for (let i = 0; i < 12_000; i++) await store.set("hot", i);
    await store.append("l", ["kept"]);
    const lines = readFileSync(logFile(dir), "utf8").trim().split("\n").length;
    expect(lines).toBeLessThan(12_000);
    await store.close();
    const again = await open(dir);
    expect(await again.get("hot")).toBe(11_999);
    expect(await again.range("l", 0, -1)).toEqual(["kept"]);
  });

  it("drops expired values from memory: 60,000 messages' dedupe claims leave only the live ones", async () => {
    // The clock is the claims' TTL passing (10 ms a message, 1 s TTL); nothing waits on a timer.
    vi.useFakeTimers({ toFake: ["Date"] });
    const dir = tempDir();
    const store = await open(dir);
    // A message journaled as the conversations layer does: claim (with its TTL) and "has work" marker.
    const journal = (i: number) => store.appendOnce(`seen:C1:m${i}`, 1000, "inbox:C1", [], "pending:C1");
    await store.set("durable", { kept: true });
    for (let i = 0; i < 20_000; i++) {
      await journal(i);
      vi.advanceTimersByTime(10);
    }
    const n = 60_000;
    const retained = await retainedBytes(async () => {
      for (let i = 20_000; i < 20_000 + n; i++) {
        expect(await journal(i)).toBe(true);
        vi.advanceTimersByTime(10);
      }
    });
    // Every claim ever made, kept until read again, held ~9 MB here.
    expect(retained).toBeLessThan(3 * MB);
    const last = 20_000 + n - 1;
    // A redelivery within the TTL is still a duplicate; one long expired is a new message.
    expect(await journal(last)).toBe(false);
    expect(await journal(0)).toBe(true);
    expect(await store.get("durable")).toEqual({ kept: true });
    expect((await store.keys("seen:")).length).toBeLessThanOrEqual(101);
    // What the log replays agrees.
    await store.close();
    const again = await open(dir);
    expect(await again.setIfAbsent(`seen:C1:m${last}`, 1)).toBe(false);
    expect(await again.get("durable")).toEqual({ kept: true });
  });
  it("purge rewrites the log at once: a deleted value's bytes are gone from disk", async () => {
    const dir = tempDir();
    const store = await open(dir);
    await store.set("kept", "still-here");
    await store.set("secret", "the-erased-words-4f1c");
    await store.append("list", ["erased-list-item-9b2e"]);
    await store.set("expired", "expired-words-77aa", 1);
    await store.delete("secret");
    await store.delete("list");
    // Deleted, but a delete is one more line: the bytes are still in the log until a rewrite.
    expect(readFileSync(logFile(dir), "utf8")).toContain("the-erased-words-4f1c");
    await new Promise((r) => setTimeout(r, 5));
    await store.purge();
    const text = readFileSync(logFile(dir), "utf8");
    for (const gone of ["the-erased-words-4f1c", "erased-list-item-9b2e", "expired-words-77aa"])
      expect(text).not.toContain(gone);
    expect(text).toContain("still-here");
    await store.close();
    expect(await (await open(dir)).get("kept")).toBe("still-here");
  });

  it("expires lists on its injected clock, and a restart replays the same expiry", async () => {
    const dir = tempDir();
    let t = 1_000_000;
    const opts = { dataDir: dir, prefix: "neo:", now: () => t };
    const store = await createFileStore(opts);
    const group = { keys: ["c:inbox", "c:log"], ttlMs: 60_000 };
    await store.appendOnce("c:seen", 1000, "c:inbox", ["hello"], "c:pending", group);
    await store.append("c:log", ["entry"], group);
    t += 59_999;
    expect(await store.length("c:inbox")).toBe(1);
    await store.close();
    const again = await createFileStore(opts);
    stores.push(again);
    expect(await again.range("c:log", 0, -1)).toEqual(["entry"]);
    t += 1;
    expect(await again.keys("c:")).toEqual(["c:pending"]);
    expect(await again.length("c:inbox")).toBe(0);
    expect((await again.size()).keys).toBe(1);
  });
  it("an expired conversation leaves the file within the hour, on the store's clock, with no write after it", async () => {
    vi.useFakeTimers({ toFake: ["Date", "setInterval"] });
    const dir = tempDir();
    const store = await open(dir);
    await store.set("kept", 1);
    const group = { keys: ["c:inbox"], ttlMs: 1000 };
    await store.appendOnce("c:seen", 1000, "c:inbox", ["expired-words-51d0"], "c:pending", group);
    vi.advanceTimersByTime(2000);
    expect(readFileSync(logFile(dir), "utf8")).toContain("expired-words-51d0");
    vi.advanceTimersByTime(60 * 60 * 1000);
    expect(readFileSync(logFile(dir), "utf8")).not.toContain("expired-words-51d0");
    expect(await store.get("kept")).toBe(1);
  });
});
