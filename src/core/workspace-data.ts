/**
 * Everything Neo keeps about one workspace (Slack team, Discord guild): every store key that holds
 * a conversation or user key of it (`<platform>:<workspace>:…`: transcripts, inboxes, journals,
 * memory, caps, access, per-channel settings). Used when a workspace uninstalls Neo. The store then
 * purges, so nothing deleted stays readable in its files (the file store's log is rewritten).
 */
import type { Store } from "../store/types.js";
import { type Platform, workspaceKey } from "./keys.js";
import { log } from "./log.js";

/**
 * Whether store key `key` belongs to `platform:workspace`. Keys are `<kind>:…:<platform>:<workspace>:…`,
 * the conversation or user key mostly inside its hash tag (`conv:log:{slack:T1:C1:1.2}`).
 */
export function isWorkspaceKey(key: string, platform: Platform, workspace: string): boolean {
  const marker = `${workspaceKey(platform, workspace)}:`;
  return key.startsWith(marker) || key.includes(`:${marker}`) || key.includes(`{${marker}`);
}

/**
 * Delete every key of `platform:workspace`, then purge the store (which also drops what the caller
 * deleted just before, e.g. the installation); returns how many. Scans all keys: rare events only.
 */
export async function deleteWorkspaceData(
  store: Store,
  platform: Platform,
  workspace: string,
): Promise<number> {
  const keys = (await store.keys("")).filter((k) => isWorkspaceKey(k, platform, workspace));
  for (const k of keys) await store.delete(k);
  await store.purge();
  log.info({ platform, workspace, keys: keys.length }, "workspace data deleted");
  return keys.length;
}
