/**
 * Plans persisted in the store so a restart keeps them, plus a once-only execution claim so a plan
 * runs at most once whatever happens above it.
 */
import { randomBytes } from "node:crypto";
import type { Store } from "../../store/types.js";
import { hashTag } from "../keys.js";
import type { Plan } from "./types.js";

/** Plans outlive any approval (default TTL 10 min) comfortably, then go away on their own. */
const PLAN_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export interface PlanStore {
  save(plan: Plan): Promise<void>;
  load(planId: string): Promise<Plan | undefined>;
  /** True for exactly one caller per plan id, ever (within the TTL). */
  claimExecution(planId: string): Promise<boolean>;
  discard(planId: string): Promise<void>;
}

/** A fresh, unguessable plan id. */
export function newPlanId(): string {
  return `plan_${randomBytes(12).toString("base64url")}`;
}

export function createPlanStore(store: Store, namespace = "approvals:plan:"): PlanStore {
  // A plan's keys carry its hash tag, so they share a Redis Cluster slot.
  const key = (planId: string) => `${namespace}${hashTag(planId)}`;
  return {
    save: (plan) => store.set(key(plan.id), plan, PLAN_TTL_MS),
    load: (planId) => store.get<Plan>(key(planId)),
    claimExecution: (planId) => store.setIfAbsent(`${key(planId)}:executed`, Date.now(), PLAN_TTL_MS),
    discard: async (planId) => {
      await store.delete(key(planId));
    },
  };
}
