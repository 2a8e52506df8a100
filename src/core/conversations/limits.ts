/** The conversations layer's limits from the validated environment. */
import type { Config } from "../../config.js";
import type { ConversationLimits } from "./types.js";

/** A retention setting (days, decimals allowed) in milliseconds. */
export function daysToMs(days: number): number {
  return Math.max(1, Math.round(days * 86_400_000));
}

export function conversationLimits(cfg: Config): ConversationLimits {
  return {
    maxConcurrentTurns: cfg.NEO_MAX_CONCURRENT_TURNS,
    userTurns: { perMinute: cfg.NEO_USER_TURNS_PER_MINUTE, burst: cfg.NEO_USER_TURN_BURST },
    recallTurns: cfg.NEO_RECALL_TURNS,
    idleEvictMs: cfg.NEO_IDLE_EVICT_MS,
    retentionMs: daysToMs(cfg.NEO_CONVERSATION_RETENTION_DAYS),
    leaseMs: cfg.NEO_LEASE_MS,
    dedupeTtlMs: cfg.NEO_DEDUPE_TTL_MS,
    // Takeover of a dead instance's conversations within about two lease periods.
    sweepMs: cfg.NEO_LEASE_MS,
  };
}
