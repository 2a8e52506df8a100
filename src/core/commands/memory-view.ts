/**
 * `/neo memory` as something a person can edit: the caller's records, one page at a time, each with
 * where it is shown and three buttons (forget this, remember everywhere, only where learned). The
 * buttons carry a {@link MemoryAction}; its text form is platform input, parsed with zod, and names
 * the person who asked for the page. A click acts only on the CLICKER's memory, and only when the
 * clicker is that person: ids in a button never let one user act on another's records.
 */
import { z } from "zod";

/** One record as the user's own view shows it. */
export interface MemoryItem {
  id: string;
  kind: "fact" | "profile" | "constraint" | "goal" | "outcome" | "pattern";
  /** One line, as the model is shown it. */
  text: string;
  /**
   * Where it is shown: `dm` only in DMs, `private` in private channels (and DMs) of `workspace`,
   * `public` in every channel of `workspace`, `everywhere` where the user widened it.
   */
  place: "dm" | "private" | "public" | "everywhere";
  /** The Slack team or Discord guild it was learned in, when known. */
  workspace?: string;
  /** Epoch ms of its latest version. */
  updatedAt: number;
}

/** A page of the caller's memory, with what the last click did. */
export interface MemoryPage {
  items: MemoryItem[];
  /** 0-based. */
  page: number;
  pages: number;
  /** How many records in all. */
  total: number;
  /** What the click that led here did ("Forgotten: …"), if any. */
  note?: string;
}

/** What a memory button does: forget a record, show it everywhere or only where learned, turn a page. */
export type MemoryOp = "forget" | "everywhere" | "here" | "page";

export interface MemoryAction {
  op: MemoryOp;
  /** The page the click came from (`page`: the page to show). */
  page: number;
  /** The platform user id of the person the page was made for. */
  owner: string;
  /** The record (not for `page`). */
  id?: string;
}

/** `neo:mem:<op>:<page>:<owner>[:<record id>]`: at most 100 characters, Discord's custom_id limit. */
export const MEMORY_ACTION_PREFIX = "neo:mem:";

const actionText = z
  .string()
  .max(100)
  .regex(/^neo:mem:(forget|everywhere|here|page):(\d{1,4}):([A-Za-z0-9_-]{1,32})(?::([A-Za-z0-9-]{1,40}))?$/);

export function encodeMemoryAction(a: MemoryAction): string {
  return `${MEMORY_ACTION_PREFIX}${a.op}:${a.page}:${a.owner}${a.id ? `:${a.id}` : ""}`;
}

/** A button's text back into an action; undefined for anything that is not one Neo made. */
export function parseMemoryAction(raw: unknown): MemoryAction | undefined {
  const ok = actionText.safeParse(raw);
  if (!ok.success) return undefined;
  const [, op, page, owner, id] = /^neo:mem:([a-z]+):(\d+):([^:]+)(?::(.+))?$/.exec(ok.data)!;
  if ((op === "page") !== (id === undefined)) return undefined;
  return { op: op as MemoryOp, page: Number(page), owner: owner!, ...(id ? { id } : {}) };
}

const KIND_LABEL: Record<MemoryItem["kind"], string> = {
  fact: "fact",
  profile: "about you",
  constraint: "rule",
  goal: "goal",
  outcome: "outcome",
  pattern: "procedure",
};

/** Where an item is shown, in words. */
export function placeLabel(item: Pick<MemoryItem, "place" | "workspace">): string {
  switch (item.place) {
    case "dm":
      return "only in DMs";
    case "private":
      return `private channels${item.workspace ? ` of ${item.workspace}` : ""}`;
    case "public":
      return `channels${item.workspace ? ` of ${item.workspace}` : ""}`;
    case "everywhere":
      return "everywhere";
  }
}

/** An item's line: its kind, its text (cut to `max` characters) and where it is shown. */
export function itemLine(item: MemoryItem, max = 300): string {
  const text = item.text.length > max ? `${item.text.slice(0, max - 1)}…` : item.text;
  return `${text} — _${KIND_LABEL[item.kind]}, ${placeLabel(item)}_`;
}

/** Page `page` (clamped) of `items`, `size` to a page. */
export function pageOf(items: MemoryItem[], page: number, size: number, note?: string): MemoryPage {
  const pages = Math.max(1, Math.ceil(items.length / size));
  const p = Math.min(Math.max(0, page), pages - 1);
  return {
    items: items.slice(p * size, (p + 1) * size),
    page: p,
    pages,
    total: items.length,
    ...(note ? { note } : {}),
  };
}

/** The page's heading line. */
export function pageHeading(view: MemoryPage): string {
  if (view.total === 0) return "I don't remember anything about you.";
  const of = view.pages > 1 ? ` (page ${view.page + 1} of ${view.pages})` : "";
  return `*What I remember about you*: ${view.total} record(s)${of}. Only you see this.`;
}
