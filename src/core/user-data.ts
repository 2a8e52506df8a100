/**
 * What an erasure (`/neo forget`, an admin's `/neo forget <user>`) removes beyond the person's
 * cortex: their usage counts, cached name and turn bucket. A Discord person is one across guilds (`cortexOwner`), while usage is
 * keyed per guild, so every guild's counts of theirs go; a Slack person is one per workspace.
 */
import { randomUUID } from "node:crypto";
import type { Store } from "../store/types.js";
import { cortexOwner, hashTagOf, parseUserKey, type UserKey } from "./keys.js";
import { USAGE_PREFIX } from "./usage/usage-store.js";

/** Whether user key `key` is the same person as `user` (see above); false for anything else. */
export function samePerson(key: string, user: UserKey): boolean {
  try {
    parseUserKey(key);
    return cortexOwner(key) === cortexOwner(user);
  } catch {
    return false;
  }
}

/**
 * Keys of one person outside their cortex: usage counters (hash-tagged with the user key), the
 * adapters' cached directory entry (`directory:user:<user key>`: their name) and their turn bucket.
 */
const PERSONAL_PREFIXES = [USAGE_PREFIX, "directory:user:", "rate:user:"];

/** Delete every such key of `user`'s person; returns how many. The caller purges the store. */
export async function deletePersonalKeys(store: Store, user: UserKey): Promise<number> {
  let n = 0;
  for (const prefix of PERSONAL_PREFIXES) {
    for (const k of await store.keys(prefix)) {
      const owner = hashTagOf(k) ?? k.slice(prefix.length);
      if (!samePerson(owner, user)) continue;
      await store.delete(k);
      n++;
    }
  }
  return n;
}

/** What `eraseUser` acts through: the store, the person's cortex, and the approvals. */
export interface EraseDeps {
  store: Store;
  /** Wipe the person's cortex and recalled turns; resolves with how many were removed. */
  forgetMemory(user: UserKey): Promise<number>;
  /** Their words in transcripts: their DMs emptied, their messages in shared threads replaced. */
  conversations: { erase(isTheirs: (user: UserKey) => boolean): Promise<number> };
  /** Stop the person's own tool processes and delete their tool folders. */
  tools: { eraseUser(user: UserKey): Promise<void> };
  approvals: {
    listPending(): Promise<Array<{ requester: { userKey: UserKey } }>>;
    revokeUser(user: UserKey, by: UserKey, note: string): Promise<number>;
    pseudonymise(isTheirs: (key: UserKey) => boolean, alias: string): Promise<number>;
  };
}

/**
 * Erase what Neo holds about `user`'s person: their pending approvals are closed (as cancelled, by
 * `by`), they are pseudonymised in approval records and the audit, their words taken out of every
 * transcript they spoke in, their tool folders (per-user servers), usage counts, cached name and cortex deleted, then the store purged (the file store's log
 * rewritten). Resolves with how many cortex records and turns went.
 */
export async function eraseUser(deps: EraseDeps, user: UserKey, by: UserKey): Promise<number> {
  const isTheirs = (k: UserKey) => samePerson(k, user);
  // Every part runs even if one fails (a conversation held by a busy instance, the store briefly
  // away): what can be erased is, and the error names what is left for a second /neo forget.
  const failed: string[] = [];
  const step = async (what: string, fn: () => Promise<unknown>) => {
    try {
      await fn();
    } catch (err) {
      failed.push(`${what} (${(err as Error).message})`);
    }
  };
  await step("pending approvals", async () => {
    const pending = await deps.approvals.listPending();
    const requesters = new Set(pending.map((r) => r.requester.userKey).filter(isTheirs));
    for (const k of requesters)
      await deps.approvals.revokeUser(k, by, "Closed: the requester's data was erased.");
  });
  // Who approved what stays, under a pseudonym that is not their id (one per erasure).
  await step("approval records", () =>
    deps.approvals.pseudonymise(isTheirs, `erased-${randomUUID().slice(0, 8)}`),
  );
  await step("transcripts", () => deps.conversations.erase(isTheirs));
  await step("usage and cached name", () => deletePersonalKeys(deps.store, user));
  await step("tool folders", () => deps.tools.eraseUser(user));
  // Last: it purges the store, which drops what was deleted above from its files too.
  let removed = 0;
  await step("memory", async () => {
    removed = await deps.forgetMemory(user);
  });
  if (failed.length > 0) throw new ErasureIncompleteError(failed);
  return removed;
}

/** Some parts of an erasure could not be done now; the rest was. Running it again finishes it. */
export class ErasureIncompleteError extends Error {
  constructor(readonly parts: string[]) {
    super(`erasure incomplete, run it again to finish: ${parts.join("; ")}`);
    this.name = "ErasureIncompleteError";
  }
}
