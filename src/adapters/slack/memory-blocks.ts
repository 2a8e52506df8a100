/**
 * `/neo memory` pages and the App Home as Block Kit (https://docs.slack.dev/reference/block-kit/blocks):
 * a section per record and an actions block with its buttons, then Previous/Next. Every button's
 * `value` is the action's text form (`memory-view.ts`), which names the page's owner; `action_id`s
 * are unique within a message or view, as Slack requires, and all start with {@link MEMORY_ACTION}.
 */
import {
  encodeMemoryAction,
  type HomeView,
  itemLine,
  type MemoryOp,
  type MemoryPage,
  pageHeading,
} from "../../core/commands/index.js";
import { markdownToMrkdwn } from "./mrkdwn.js";

/** The prefix of every memory button's action_id. */
export const MEMORY_ACTION = "neo_mem";

type Block = Record<string, unknown>;

const mrkdwn = (text: string): Block => ({ type: "section", text: { type: "mrkdwn", text } });

/** The blocks of one page of `owner`'s memory (`owner`: their Slack user id). */
export function memoryBlocks(view: MemoryPage, owner: string): Block[] {
  let n = 0;
  const button = (label: string, op: MemoryOp, page: number, id?: string, style?: "danger" | "primary") => ({
    type: "button",
    action_id: `${MEMORY_ACTION}_${op}_${n++}`,
    text: { type: "plain_text", text: label },
    value: encodeMemoryAction({ op, page, owner, ...(id ? { id } : {}) }),
    ...(style ? { style } : {}),
  });
  const blocks: Block[] = [];
  if (view.note) blocks.push({ type: "context", elements: [{ type: "mrkdwn", text: view.note }] });
  blocks.push(mrkdwn(markdownToMrkdwn(pageHeading(view))));
  for (const item of view.items) {
    blocks.push(mrkdwn(markdownToMrkdwn(itemLine(item))));
    blocks.push({
      type: "actions",
      elements: [
        button("Forget this", "forget", view.page, item.id, "danger"),
        item.place === "everywhere"
          ? button("Only where learned", "here", view.page, item.id)
          : button("Remember everywhere", "everywhere", view.page, item.id),
      ],
    });
  }
  const nav = [
    ...(view.page > 0 ? [button("Previous", "page", view.page - 1)] : []),
    ...(view.page + 1 < view.pages ? [button("Next", "page", view.page + 1)] : []),
  ];
  if (nav.length) blocks.push({ type: "actions", elements: nav });
  return blocks;
}

/** The App Home (`views.publish`): usage and budget, pending approvals, then the memory page. */
export function homeBlocks(home: HomeView, owner: string): Record<string, unknown> {
  return {
    type: "home",
    blocks: [
      { type: "header", text: { type: "plain_text", text: "Neo" } },
      mrkdwn(markdownToMrkdwn(`*Your usage*\n${home.usage}`)),
      mrkdwn(
        markdownToMrkdwn(
          home.approvals.length
            ? `*Your pending approvals*\n${home.approvals.map((a) => `• ${a}`).join("\n")}`
            : "*Your pending approvals*: none",
        ),
      ),
      { type: "divider" },
      ...memoryBlocks(home.memory, owner),
    ],
  };
}
