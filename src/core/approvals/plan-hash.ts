/**
 * The plan's fingerprint: SHA-256 of its canonical JSON (keys sorted at every level, no spaces).
 * The same bytes are hashed when the plan is offered, shown (the hash is on the message), audited
 * and executed, so "what you see is what runs" can be checked by anyone holding the audit log.
 */
import { createHash } from "node:crypto";
import type { Plan } from "./types.js";

/** JSON with object keys sorted recursively: one text per value, whatever the key order was. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) out[key] = sortKeys(v);
  }
  return out;
}

/** `sha256:<64 hex>` of the whole plan (id, intent, summary, every action, requester, time). */
export function hashPlan(plan: Plan): string {
  return `sha256:${createHash("sha256").update(canonicalJson(plan)).digest("hex")}`;
}
