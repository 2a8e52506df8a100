/**
 * The remote executor's HTTP contract (documented in docs/approvals.md, "Remote executor HTTP
 * contract"). Every response is validated here; anything else is a clear error and
 * nothing is approved.
 */
import { z } from "zod";

export const intentStatus = z.enum([
  "planning",
  "awaiting_approval",
  "executing",
  "succeeded",
  "failed",
  "rejected",
  "expired",
]);
export type IntentStatus = z.infer<typeof intentStatus>;

const decimal = z.string().regex(/^\d+(\.\d+)?$/, "amount must be a non-negative decimal string");

const spend = z.object({ amount: decimal, asset: z.string().min(1), recipient: z.string().nullable() });

const action = z.object({
  tool: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()),
  spend: spend.nullable().optional(),
});

export const remotePlan = z.object({
  summary: z.string().min(1),
  actions: z.array(action).min(1),
});

export const remoteOutcome = z.object({
  status: z.enum(["success", "failure", "partial"]),
  results: z.array(z.object({ tool: z.string(), content: z.string(), isError: z.boolean() })),
  notRun: z.array(action).default([]),
  txIds: z.array(z.string()).optional(),
});

/** `POST /intents` and `POST /intents/{id}/decision` answers. */
export const accepted = z.object({ id: z.string().min(1).max(200), status: intentStatus });

/** `GET /intents/{id}` answer. */
export const intentState = z.object({
  id: z.string().min(1).max(200),
  status: intentStatus,
  plan: remotePlan.optional(),
  outcome: remoteOutcome.optional(),
  error: z.string().optional(),
});
export type IntentState = z.infer<typeof intentState>;
