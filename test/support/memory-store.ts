/**
 * An embedded file store in a fresh temporary directory, for tests that need a store but not its
 * data (a discord.js Client's REST budget, for example). The directory is left to the OS's tmp.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/types.js";

export function memoryStore(): Promise<Store> {
  return createStore({ dataDir: mkdtempSync(join(tmpdir(), "neo-store-")), prefix: "neo:" });
}
