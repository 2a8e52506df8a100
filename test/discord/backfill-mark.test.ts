/**
 * The catch-up mark of a channel (the last message handled there, kept in the store) never passes a
 * message still being handled: a later message can finish first, and if the process then died the
 * earlier one would be skipped by the next catch-up.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client, Message } from "discord.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBackfill } from "../../src/adapters/discord/backfill.js";
import { createFileStore } from "../../src/store/file-store.js";
import type { Store } from "../../src/store/types.js";

// begin/done read only a message's id and channel; the catch-up's REST side is covered end to end
// (test/app/restart-catch-up.e2e.test.ts), so no client is needed here.
const msg = (id: string, channelId = "100"): Message => ({ id, channelId }) as unknown as Message;
const noClient = {} as Client;

let store: Store;
beforeEach(async () => {
  store = await createFileStore({ dataDir: mkdtempSync(join(tmpdir(), "neo-mark-")), prefix: "neo:" });
});
afterEach(async () => {
  await store.close();
});

const markOf = async (channel = "100") => (await store.get<{ id: string }>(`discord:seen:${channel}`))?.id;

describe("Discord catch-up mark", () => {
  it("stays below a message still in flight when a later one finishes first, then moves on", async () => {
    const b = createBackfill(noClient, store);
    b.begin(msg("1000"));
    b.begin(msg("1005"));
    await b.done(msg("1005"), true);
    expect(await markOf()).toBe("999");
    await b.done(msg("1000"), true);
    expect(await markOf()).toBe("1000");
    b.begin(msg("1010"));
    await b.done(msg("1010"), true);
    expect(await markOf()).toBe("1010");
  });

  it("never moves back, ignores messages not handled, and marks the parent channel of a thread opening", async () => {
    const b = createBackfill(noClient, store);
    b.begin(msg("2000"));
    await b.done(msg("2000"), true, "parent");
    expect([await markOf(), await markOf("parent")]).toEqual(["2000", "2000"]);
    b.begin(msg("1990"));
    await b.done(msg("1990"), true);
    expect(await markOf()).toBe("2000");
    b.begin(msg("2010"));
    await b.done(msg("2010"), false);
    expect(await markOf()).toBe("2000");
  });
});
