/**
 * Who may use Neo. Admins deny and allow users; the lists live in the store so every instance
 * agrees. A denied user cannot talk to Neo nor reach `core_execute`; admins can never be denied.
 */
import type { Store } from "../../store/types.js";
import { hashTag, hashTagOf, type UserKey } from "../keys.js";
import type { IsAdmin } from "./admin.js";

export interface AccessEntry {
  by: UserKey;
  at: number;
}

export interface AccessPolicy {
  /**
   * False when an admin denied the user. Rejects with the store's error when the store cannot be
   * reached: callers that guard spending must treat that as "no".
   */
  isAllowed(userKey: UserKey): Promise<boolean>;
  isAdmin: IsAdmin;
  deny(userKey: UserKey, by: UserKey): Promise<void>;
  /** Lift a deny. */
  allow(userKey: UserKey, by: UserKey): Promise<void>;
  /** Denied users and who denied them. */
  denied(): Promise<Array<{ userKey: UserKey } & AccessEntry>>;
}

export class AccessError extends Error {
  readonly code = "ACCESS_REFUSED";
}

export function createAccessPolicy(opts: {
  store: Store;
  isAdmin: IsAdmin;
  namespace?: string;
}): AccessPolicy {
  const ns = opts.namespace ?? "access:deny:";
  const { store, isAdmin } = opts;
  const key = (userKey: UserKey) => `${ns}${hashTag(userKey)}`;
  return {
    isAdmin,
    isAllowed: async (userKey) => {
      if (isAdmin(userKey)) return true;
      return (await store.get<AccessEntry>(key(userKey))) === undefined;
    },
    deny: async (userKey, by) => {
      if (isAdmin(userKey)) throw new AccessError(`${userKey} is an admin and cannot be denied`);
      await store.set<AccessEntry>(key(userKey), { by, at: Date.now() });
    },
    allow: async (userKey) => {
      await store.delete(key(userKey));
    },
    denied: async () => {
      const keys = await store.keys(ns);
      const out: Array<{ userKey: UserKey } & AccessEntry> = [];
      for (const k of keys) {
        const entry = await store.get<AccessEntry>(k);
        const userKey = hashTagOf(k);
        if (entry && userKey) out.push({ userKey, ...entry });
      }
      return out;
    },
  };
}
