/**
 * `/neo memory` on Discord: an ephemeral message, one page at a time, with components
 * (https://discord.com/developers/docs/components/reference): one action row per record (Forget
 * this, Remember everywhere / Only where learned), then Previous/Next. A message holds at most five
 * rows, so a page holds {@link DISCORD_MEMORY_PAGE} records. Each button's custom_id is the action's
 * text form (`memory-view.ts`, at most 100 characters), which names the page's owner.
 */
import {
  encodeMemoryAction,
  itemLine,
  type MemoryOp,
  type MemoryPage,
  pageHeading,
} from "../../core/commands/index.js";

/** Records per page: four rows of buttons and the row that turns pages. */
export const DISCORD_MEMORY_PAGE = 4;

const BUTTON = 2;
const ROW = 1;
const DANGER = 4;
const SECONDARY = 2;

/** The message (content and components) of one page of `owner`'s memory (`owner`: their user id). */
export function memoryMessage(view: MemoryPage, owner: string) {
  const button = (label: string, op: MemoryOp, page: number, id?: string, style = SECONDARY) => ({
    type: BUTTON,
    style,
    label,
    custom_id: encodeMemoryAction({ op, page, owner, ...(id ? { id } : {}) }),
  });
  const lines = view.items.map((item, n) => `${view.page * DISCORD_MEMORY_PAGE + n + 1}. ${itemLine(item)}`);
  const rows = view.items.map((item, n) => {
    const number = view.page * DISCORD_MEMORY_PAGE + n + 1;
    return {
      type: ROW,
      components: [
        button(`Forget ${number}`, "forget", view.page, item.id, DANGER),
        item.place === "everywhere"
          ? button(`${number}: only where learned`, "here", view.page, item.id)
          : button(`${number}: remember everywhere`, "everywhere", view.page, item.id),
      ],
    };
  });
  const nav = [
    ...(view.page > 0 ? [button("Previous", "page", view.page - 1)] : []),
    ...(view.page + 1 < view.pages ? [button("Next", "page", view.page + 1)] : []),
  ];
  if (nav.length) rows.push({ type: ROW, components: nav });
  const content = [...(view.note ? [`_${view.note}_`] : []), pageHeading(view), ...lines].join("\n");
  return { content, components: rows };
}
