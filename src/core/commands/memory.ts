/**
 * `/neo memory`, its buttons, its export and Slack's App Home: the platform-free part. Every call
 * acts on `ctx.caller`'s memory only; a button's action is refused unless its owner is the caller.
 */
import { parseUserKey } from "../keys.js";
import { type MemoryAction, type MemoryPage, pageOf } from "./memory-view.js";
import type { CommandContext, CommandDeps, CommandReply } from "./types.js";

const DEFAULT_PAGE_SIZE = 10;

/** Page `page` of the caller's memory. */
export async function memoryPage(
  ctx: CommandContext,
  deps: CommandDeps,
  page: number,
  note?: string,
): Promise<MemoryPage> {
  return pageOf(await deps.memory.list(ctx.caller), page, ctx.memoryPageSize ?? DEFAULT_PAGE_SIZE, note);
}

/** `/neo memory export`: the caller's data as an indented JSON file. */
export async function exportReply(ctx: CommandContext, deps: CommandDeps): Promise<CommandReply> {
  const data = await deps.memory.export(ctx.caller);
  const bytes = new TextEncoder().encode(`${JSON.stringify(data, null, 2)}\n`);
  return {
    kind: "file",
    text: "Everything I hold about you, as JSON: what I remember (and where I learned it), usage and approvals.",
    file: { name: "neo-export.json", bytes },
  };
}

/** Whether the caller is the person a memory page was made for. */
export function ownsAction(ctx: Pick<CommandContext, "caller">, action: MemoryAction): boolean {
  return parseUserKey(ctx.caller).user === action.owner;
}

/**
 * A click on a memory button. Another person's click (a page is only ever shown to its owner, but a
 * payload can be forged) changes nothing and says so; the record is looked up in the CALLER's memory.
 */
export async function runMemoryAction(
  action: MemoryAction,
  ctx: CommandContext,
  deps: CommandDeps,
): Promise<{ refused: string } | { view: MemoryPage }> {
  if (!ownsAction(ctx, action)) return { refused: "Only the person this memory belongs to can change it." };
  const gone = "That record is no longer in your memory.";
  let note: string | undefined;
  if (action.op !== "page" && action.id) {
    if (action.op === "forget") {
      note = (await deps.memory.forgetOne(ctx.caller, action.id)) ? "Forgotten for good." : gone;
    } else {
      const everywhere = action.op === "everywhere";
      const changed = await deps.memory.setEverywhere(ctx.caller, action.id, everywhere);
      note = !changed
        ? gone
        : everywhere
          ? "From your next message on, that is remembered everywhere."
          : "From your next message on, that is remembered only where you said it.";
    }
  }
  return { view: await memoryPage(ctx, deps, action.page, note) };
}

/** What Slack's App Home shows its user: their memory, usage and budget, and their pending approvals. */
export interface HomeView {
  memory: MemoryPage;
  /** Markdown bullets (`/neo usage`). */
  usage: string;
  /** One line each. */
  approvals: string[];
}

export async function homeView(ctx: CommandContext, deps: CommandDeps, page = 0, note?: string) {
  const [memory, usage, pending] = await Promise.all([
    memoryPage(ctx, deps, page, note),
    deps.usage.report(ctx.caller),
    deps.approvals.pending(),
  ]);
  const approvals = pending
    .filter((r) => r.requester.userKey === ctx.caller)
    .map(
      (r) =>
        `\`${r.id}\` ${r.plan.summary}, expires in ${Math.max(0, Math.round((r.expiresAt - Date.now()) / 60_000))} min`,
    );
  return { memory, usage, approvals } satisfies HomeView;
}
