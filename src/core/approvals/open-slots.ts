/**
 * Each requester's open (pending) approvals, at most `max` at once (NEO_MAX_PENDING_APPROVALS).
 * One list per user changed with `updateAtomically`, so concurrent requests cannot both take the
 * last slot; a slot whose approval has expired frees itself even if it was never settled.
 */
import type { Store } from "../../store/types.js";
import { updateAtomically } from "../../store/update.js";
import { hashTag, type UserKey } from "../keys.js";
import { log } from "../log.js";
import { ApprovalLimitError } from "./errors.js";
import type { ApprovalRecord } from "./types.js";

interface OpenSlot {
  id: string;
  expiresAt: number;
}

export interface OpenSlots {
  /** Take one of the requester's slots; throws `ApprovalLimitError` when all are taken. */
  take(rec: ApprovalRecord): Promise<void>;
  /** Free the slot of an approval that is no longer pending (best effort: expiry frees it too). */
  free(rec: ApprovalRecord): Promise<void>;
}

export function createOpenSlots(store: Store, max: number, now: () => number, ttlMs: number): OpenSlots {
  const key = (user: UserKey) => `approvals:open:${hashTag(user)}`;
  return {
    take: async (rec) => {
      const t = now();
      const { result } = await updateAtomically<OpenSlot[], number | null>(
        store,
        key(rec.requester.userKey),
        (current) => {
          const open = (current ?? []).filter((s) => s.expiresAt > t);
          if (open.length >= max) return { result: open.length };
          return { next: [...open, { id: rec.id, expiresAt: rec.expiresAt }], result: null };
        },
        { ttlMs },
      );
      if (result !== null) throw new ApprovalLimitError(result);
    },
    free: async (rec) => {
      await updateAtomically<OpenSlot[], null>(
        store,
        key(rec.requester.userKey),
        (current) =>
          current?.some((s) => s.id === rec.id)
            ? { next: current.filter((s) => s.id !== rec.id), result: null }
            : { result: null },
        { ttlMs },
      ).catch((err: unknown) => log.warn({ err, approvalId: rec.id }, "could not free an approval slot"));
    },
  };
}
