/**
 * A conversation lease taken over while held (it expired and another holder set it): the next
 * renewal finds it gone, marks it lost and stops the turn it guards, with reason "lease".
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createLeases } from "../../src/core/conversations/lease.js";
import { createFileStore } from "../../src/store/file-store.js";
import type { Store } from "../../src/store/types.js";

const opened: Array<{ store: Store; dir: string }> = [];
afterEach(async () => {
  for (const { store, dir } of opened.splice(0)) {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
});

describe("conversation lease", () => {
  it("stops the guarded turn when a renewal finds the lease taken over", async () => {
    const dir = await mkdtemp(join(tmpdir(), "neo-lease-"));
    const store = await createFileStore({ dataDir: dir, prefix: "t:" });
    opened.push({ store, dir });
    const lease = (await createLeases(store, "a", 150).tryAcquire("lease:x"))!;
    const turn = new AbortController();
    lease.guard(turn);
    const stopped = new Promise<unknown>((resolve) =>
      turn.signal.addEventListener("abort", () => resolve(turn.signal.reason)),
    );
    expect(lease.lost).toBe(false);
    await store.set("lease:x", "b#other", 60_000);
    expect(await stopped).toBe("lease");
    expect(lease.lost).toBe(true);
    await lease.release();
  });

  it("leaves a turn it no longer guards running", async () => {
    const dir = await mkdtemp(join(tmpdir(), "neo-lease-"));
    const store = await createFileStore({ dataDir: dir, prefix: "t:" });
    opened.push({ store, dir });
    const lease = (await createLeases(store, "a", 150).tryAcquire("lease:x"))!;
    const before = new AbortController();
    lease.guard(before);
    lease.guard(null);
    const watcher = new AbortController();
    lease.guard(watcher);
    const stopped = new Promise<void>((resolve) => watcher.signal.addEventListener("abort", () => resolve()));
    await store.set("lease:x", "b#other", 60_000);
    await stopped;
    expect(before.signal.aborted).toBe(false);
    await lease.release();
  });
});
