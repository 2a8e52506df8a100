/** The approvals area's public API (wiring in src/main.ts, rendering in the adapters). */
export { type AuditEntry, type AuditEvent, type AuditLog, createAuditLog } from "./audit.js";
export { newApprovalId } from "./broker/offer.js";
export { type ApprovalBroker, type ApprovalBrokerOptions, createApprovalBroker } from "./broker.js";
export { type CapCheck, createSpendCaps, DAY_MS, planSpend, type SpendCaps } from "./caps.js";
export { type CoreExecute, type CoreExecuteOptions, createCoreExecute } from "./core-execute.js";
export { addDecimal, compareDecimal, DecimalError, sumDecimal, toDecimal } from "./decimal.js";
export { createEmbeddedExecutor, type EmbeddedExecutorOptions, summarise } from "./embedded-executor.js";
export {
  ApprovalLimitError,
  ApprovalStoreError,
  PlanError,
  PlanMismatchError,
  PlanNotFoundError,
  RemoteExecutorError,
} from "./errors.js";
export type * from "./executor.js";
export { INTERRUPTED_NOTES } from "./interrupted.js";
export { type JsonSchema, validateJsonSchema } from "./json-schema.js";
export { canonicalJson, hashPlan } from "./plan-hash.js";
export {
  actionArguments,
  MAX_PLAN_ACTIONS,
  PlanRefusedError,
  packLines,
  planSizeProblem,
  recipientTotals,
} from "./plan-view.js";
export { refusal } from "./refusals.js";
export { createRemoteExecutor, type RemoteExecutorOptions } from "./remote-executor.js";
export { renderOutcome, renderPlan, renderStatus } from "./render.js";
export { describeSpend, extractSpend, normaliseAsset, UNSPECIFIED_ASSET } from "./spend.js";
export { extractTxIds } from "./tx-ids.js";
export type * from "./types.js";
