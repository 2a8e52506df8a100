/**
 * Where an approval lives in the store: its record, its one-time decision token (what a decision
 * consumes) and the reference of the message showing it, each under its own key.
 */
import type { Store } from "../../../store/types.js";
import { hashTag, hashTagOf } from "../../keys.js";
import { ApprovalStoreError } from "../errors.js";
import type { ApprovalRecord } from "../types.js";

/**
 * Approval records stay this long by default (`NEO_AUDIT_RETENTION_DAYS`): who approved what, and
 * late clicks get the true reason. The broker takes its own (`ApprovalBrokerOptions.retentionMs`).
 */
export const RECORD_TTL_MS = 365 * 24 * 60 * 60 * 1000;
/** The token outlives the expiry so the waiter (not the TTL) settles it as expired. */
export const TOKEN_GRACE_MS = 10 * 60 * 1000;

const RECORD_PREFIX = "approvals:rec:";

// Each carries the approval's hash tag: one approval's keys share a Redis Cluster slot.
export const recordKey = (id: string): string => `${RECORD_PREFIX}${hashTag(id)}`;
export const tokenKey = (id: string): string => `approvals:token:${hashTag(id)}`;
export const refKey = (id: string): string => `approvals:ref:${hashTag(id)}`;

/** The record with its message reference, which is written apart once the message exists. */
export async function loadRecord(store: Store, id: string): Promise<ApprovalRecord | undefined> {
  const rec = await store.get<ApprovalRecord>(recordKey(id));
  if (!rec) return undefined;
  const ref = await store.get<string>(refKey(id));
  return ref === undefined ? rec : { ...rec, messageRef: ref };
}

/** The ids of every stored record, open or decided. */
export async function recordIds(store: Store): Promise<string[]> {
  return (await store.keys(RECORD_PREFIX)).flatMap((k) => hashTagOf(k) ?? []);
}

/** Fail closed: nothing is offered or decided while the store is away. */
export function assertHealthy(store: Store, what: string): void {
  if (!store.healthy()) throw new ApprovalStoreError(what);
}
