/**
 * The IO of a `/neo ask` turn: the deferred ephemeral reply is the status, edited in place
 * (coalesced); the answer and notices are follow-ups; approvals go to the channel with the bot token
 * (their edits must outlive the 15-minute interaction token).
 */
import type { ChatInputCommandInteraction, REST } from "discord.js";
import type { ConversationIO } from "../../core/conversations/types.js";
import { log } from "../../core/log.js";
import { createApprovalChannel } from "./approval-channel.js";
import { createEditCoalescer } from "./coalesce.js";
import { statusLine } from "./render.js";
import { splitMessage } from "./split.js";

const allowedMentions = { parse: [], repliedUser: false } as const;

export function createInteractionIO(
  interaction: ChatInputCommandInteraction,
  rest: REST,
  editIntervalMs: number,
): ConversationIO {
  const edits = createEditCoalescer(async (_key, content) => {
    await interaction.editReply({ content, allowedMentions });
  }, editIntervalMs);
  const key = interaction.id;
  let answered = false;

  const followUps = async (text: string): Promise<void> => {
    for (const content of splitMessage(text)) {
      await interaction.followUp({ content, allowedMentions });
    }
  };

  return {
    reporter: {
      async status(text) {
        if (!answered) edits.push(key, statusLine(text));
      },
      async say(text) {
        // The first follow-up after a deferred reply would replace it (and inherit its ephemeral
        // flag): settle the original first so the answer is a message of its own.
        await edits.cancel(key);
        if (!answered) await interaction.editReply({ content: "Working on it…", allowedMentions });
        await followUps(text);
        answered = true;
        await interaction
          .editReply({ content: "Answered below.", allowedMentions })
          .catch((err: unknown) => log.debug({ err }, "could not close the /neo ask status"));
      },
      async notice(text) {
        await followUps(text);
      },
    },
    approvals: createApprovalChannel(rest, interaction.channelId),
    async acknowledgeQueued() {
      edits.push(key, statusLine("Queued behind the turn already running here."));
    },
  };
}
