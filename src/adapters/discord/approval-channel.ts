/**
 * `ApprovalChannel` for a Discord conversation: the plan is posted in the thread (or DM) with the bot
 * token, so its later edits do not depend on an interaction token. `messageRef` is `channel/message`.
 */
import { type REST, Routes } from "discord.js";
import type { ApprovalChannel } from "../../core/approvals/types.js";
import { log } from "../../core/log.js";
import { fitsDiscord, renderApproval } from "./approval-render.js";
import { createBody, editBody } from "./render.js";

export function createApprovalChannel(rest: REST, channelId: string): ApprovalChannel {
  return {
    fits: fitsDiscord,
    async present(record) {
      const msg = (await rest.post(Routes.channelMessages(channelId), {
        body: createBody({ content: "", ...renderApproval(record) }),
      })) as { id: string };
      return `${channelId}/${msg.id}`;
    },
    async update(record) {
      if (!record.messageRef) {
        log.warn({ approvalId: record.id }, "approval has no message to update");
        return;
      }
      const [ch, id] = record.messageRef.split("/") as [string, string];
      await rest.patch(Routes.channelMessage(ch, id), { body: editBody(renderApproval(record)) });
    },
  };
}
