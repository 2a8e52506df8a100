/**
 * Where a turn runs, and the memory rule that follows from it (DESIGN.md, Memory scopes). A cortex
 * record keeps the place it was learned in; a turn sees only records at least as private as its own
 * place: everything in a DM, `private` and `public` ones of the same workspace in a private channel,
 * `public` ones of the same workspace in a public channel. A record the user widened is seen
 * everywhere. The adapters decide the kind (see docs/security.md, "Memory and places").
 */
import { z } from "zod";

/** `dm`: only the user and Neo. `private`: a private channel or group DM. `public`: anyone may read. */
export const placeKind = z.enum(["dm", "private", "public"]);
export type PlaceKind = z.infer<typeof placeKind>;

export const placeSchema = z.object({
  kind: placeKind,
  /** The Slack team or Discord guild (`@me` for a Discord DM, `local` for the console). */
  workspace: z.string().min(1),
  /**
   * The kind was not known when the message came (its lookup had not come back): the turn reads
   * as `kind` (`public`, shown the least) and what it teaches is kept as `private` (`learnedIn`).
   */
  guessed: z.literal(true).optional(),
});
export type Place = z.infer<typeof placeSchema>;

/** Where something was learned, as kept on a record. `everywhere`: the user widened it. */
export const provenanceSchema = placeSchema
  .omit({ guessed: true })
  .extend({ everywhere: z.boolean().optional() });
export type Provenance = z.infer<typeof provenanceSchema>;

/** The console: one person at a terminal, like a DM. */
export const CONSOLE_PLACE: Place = { kind: "dm", workspace: "local" };

/**
 * The place what a turn at `here` teaches is kept as learned in. A guessed place reads as `public`
 * but may be a private channel: its records are kept as `private`, so they are never shown in a
 * public channel (wider than true would leak; narrower only shows less).
 */
export function learnedIn(here: Place): Place {
  return here.guessed ? { kind: "private", workspace: here.workspace } : here;
}

/**
 * True when a record learned at `learned` may be shown in a turn at `here`. A record without
 * provenance (written before places existed) counts as learned in a DM: shown only in DMs.
 */
export function visibleIn(learned: Provenance | undefined, here: Place): boolean {
  if (here.kind === "dm") return true;
  if (!learned) return false;
  if (learned.everywhere) return true;
  if (learned.workspace !== here.workspace) return false;
  if (here.kind === "private") return learned.kind !== "dm";
  return learned.kind === "public";
}

/**
 * Identity of the audience a record is visible to: two records merge (dedupe, reinforcement) only
 * within one scope, so nothing said in a narrower place is folded into a record shown more widely.
 */
export function scopeOf(p: Provenance | undefined): string {
  if (!p) return "dm";
  if (p.everywhere) return "everywhere";
  return p.kind === "dm" ? "dm" : `${p.kind}@${p.workspace}`;
}
