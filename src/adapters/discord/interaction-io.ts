/**
 * The IO of a `/neo ask` turn: the deferred ephemeral reply is the status, edited in place
 * (coalesced); the answer and notices are follow-ups, the answer streamed into them as it is written
 * (paced per channel, like every draft), files too (follow-ups with attachments, in the channel's
 * paced turn); approvals go to the channel with the bot token (their edits must outlive the 15-minute
 * interaction token). A draft's first follow-up is noted in the store (`unfinished.ts`): a turn
 * resumed after a crash answers in the channel with the conversation's reporter, which removes it.
 */
import { type ChatInputCommandInteraction, MessageFlags, type REST } from "discord.js";
import type { ConversationIO } from "../../core/conversations/types.js";
import type { ConversationKey } from "../../core/keys.js";
import { log } from "../../core/log.js";
import type { Store } from "../../store/types.js";
import { createApprovalChannel } from "./approval-channel.js";
import { createEditCoalescer, type Pacer } from "./coalesce.js";
import { createDiscordDraft } from "./draft.js";
import { createDiscordFormChannel } from "./forms.js";
import { statusLine } from "./render.js";
import { splitMessage } from "./split.js";
import { stopRow } from "./stop-button.js";
import { recordDraft } from "./unfinished.js";
import { uploadJob } from "./upload.js";

const allowedMentions = { parse: [], repliedUser: false } as const;

export interface InteractionIOOptions {
  editIntervalMs: number;
  drafts: Pacer;
  conversation: ConversationKey;
  /** Where the first message of each answer draft is noted (`unfinished.ts`). */
  store: Store;
}

export function createInteractionIO(
  interaction: ChatInputCommandInteraction,
  rest: REST,
  o: InteractionIOOptions,
): ConversationIO {
  const edits = createEditCoalescer(async (_key, content) => {
    await interaction.editReply({ content, allowedMentions });
  }, o.editIntervalMs);
  const key = interaction.id;
  let answered = false;
  let opened = false;

  /**
   * The first follow-up after a deferred reply would replace it (and inherit its ephemeral flag):
   * settle the original first so the answer is a message of its own.
   */
  const openAnswer = async (): Promise<void> => {
    await edits.cancel(key);
    if (opened) return;
    opened = true;
    await interaction.editReply({ content: "Working on it…", allowedMentions });
  };
  const closeStatus = async (): Promise<void> => {
    answered = true;
    await interaction
      .editReply({ content: "Answered below.", allowedMentions })
      .catch((err: unknown) => log.debug({ err }, "could not close the /neo ask status"));
  };
  const followUps = async (text: string): Promise<void> => {
    for (const content of splitMessage(text)) {
      await interaction.followUp({ content, allowedMentions });
    }
  };

  return {
    // Only the requester sees an ephemeral follow-up.
    forms: createDiscordFormChannel(async (_user, body) => {
      await interaction.followUp({
        ...body,
        flags: MessageFlags.Ephemeral,
        allowedMentions,
      });
    }),
    reporter: {
      async status(text) {
        if (!answered) edits.push(key, statusLine(text));
      },
      async say(text) {
        await openAnswer();
        await followUps(text);
        await closeStatus();
      },
      async notice(text) {
        await followUps(text);
      },
      upload: (files, comment) =>
        o.drafts.send(
          interaction.channelId,
          uploadJob(files, comment, async (body, parts) => {
            await openAnswer();
            await interaction.followUp({
              ...(body.content ? { content: body.content } : {}),
              files: parts.map((p) => ({ attachment: p.data as Buffer, name: p.name })),
              allowedMentions,
            });
          }),
        ),
      draft: ({ requester, key: answer }) => {
        let recorded = false;
        return createDiscordDraft({
          pacer: o.drafts,
          channelId: interaction.channelId,
          stopRow: stopRow(requester, o.conversation),
          target: {
            post: async (content, components) => {
              await openAnswer();
              const msg = await interaction.followUp({ content, components, allowedMentions });
              // A turn resumed after a crash has no interaction (the token is the dead process's):
              // it answers with the conversation's reporter, which finds this draft by the note.
              if (answer && !recorded) {
                recorded = true;
                await recordDraft(o.store, o.conversation, answer, msg.id);
              }
              return msg.id;
            },
            edit: async (id, content, components) => {
              await interaction.webhook.editMessage(id, { content, components, allowedMentions });
            },
            remove: (id) => interaction.webhook.deleteMessage(id),
          },
          onFirstText: () => {},
          onEnd: async (finished) => {
            if (finished) await closeStatus();
          },
        });
      },
    },
    approvals: createApprovalChannel(rest, interaction.channelId),
    async acknowledgeQueued() {
      edits.push(key, statusLine("Queued behind the turn already running here."));
    },
  };
}
