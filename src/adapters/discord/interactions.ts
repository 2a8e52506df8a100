/**
 * Interactions: every one is acknowledged at once (a deferred ephemeral reply, well inside Discord's
 * 3 s; a memory button defers an update of its page), then worked on and answered by editing that reply. Approval buttons go to the broker; `/neo`
 * and `/neo-admin` go through the platform-free command layer; `ask` runs a turn with its own IO.
 * The Stop button on an answer being written cancels its turn (the requester's, or an admin's click).
 */
import {
  ApplicationCommandOptionType,
  type ButtonInteraction,
  type ChatInputCommandInteraction,
  type Client,
  type Interaction,
  MessageFlags,
  PermissionFlagsBits,
} from "discord.js";
import type { AccessPolicy } from "../../core/access/policy.js";
import type { DecideResult, Decision } from "../../core/approvals/types.js";
import { channelOf } from "../../core/channels/index.js";
import {
  type CommandContext,
  type CommandDeps,
  type CommandReply,
  type MemoryAction,
  ownsAction,
  parseCommand,
  parseMemoryAction,
  runCommand,
  runConfirmed,
  runMemoryAction,
} from "../../core/commands/index.js";
import type { Conversations } from "../../core/conversations/types.js";
import type { ConversationKey, UserKey } from "../../core/keys.js";
import { log } from "../../core/log.js";
import type { Place } from "../../core/place.js";
import type { Store } from "../../store/types.js";
import { parseApprovalCustomId } from "./approval-render.js";
import type { Pacer } from "./coalesce.js";
import { ADMIN_COMMAND, optionOrder, USER_COMMAND } from "./command-definitions.js";
import { onFormInteraction } from "./form-interactions.js";
import { createInteractionIO } from "./interaction-io.js";
import { DM_WORKSPACE, discordUser, dmConversation, threadConversation } from "./keys.js";
import { DISCORD_MEMORY_PAGE, memoryMessage } from "./memory-render.js";
import { guessedPlace, placeOf } from "./place.js";
import { splitMessage } from "./split.js";
import { parseStopCustomId } from "./stop-button.js";

const CONFIRM_PREFIX = "neo:cmd:";
const allowedMentions = { parse: [], repliedUser: false } as const;

export interface InteractionDeps {
  client: Client;
  broker: { decide(approvalId: string, clicker: UserKey, decision: Decision): Promise<DecideResult> };
  access: Pick<AccessPolicy, "isAllowed" | "isAdmin">;
  commands: CommandDeps;
  conversations: Pick<Conversations, "submit" | "cancel">;
  editIntervalMs: number;
  /** Paces answer drafts per channel (shared with the message reporters). */
  drafts: Pacer;
  /** Where `/neo ask` notes its answer drafts, so a turn resumed after a crash removes one left unfinished. */
  store: Store;
  /** A turn in `conversation` was stopped by a click: clear its typing and status line. */
  stopped(conversation: ConversationKey): Promise<void>;
}

function speakerOf(i: ButtonInteraction | ChatInputCommandInteraction) {
  return {
    userKey: discordUser(i.guildId, i.user.id),
    displayName: i.inCachedGuild() ? i.member.displayName : (i.user.globalName ?? i.user.username),
  };
}

/** Where `/neo ask` runs: the channel's place; a guild channel outside the cache is guessed (`place.ts`). */
function interactionPlace(i: ChatInputCommandInteraction): Place {
  if (!i.guildId) return { kind: "dm", workspace: DM_WORKSPACE };
  return i.channel ? placeOf(i.channel, i.guildId) : guessedPlace(i.guildId);
}

/** The conversation a slash command runs in: the thread, the DM, or the channel itself. */
function conversationOf(client: Client, guildId: string | null, channelId: string): ConversationKey {
  if (!guildId) return dmConversation(channelId);
  const ch = client.channels.cache.get(channelId);
  if (ch?.isThread()) return threadConversation(guildId, ch.parentId ?? channelId, channelId);
  return threadConversation(guildId, channelId, channelId);
}

function contextOf(d: InteractionDeps, i: ButtonInteraction | ChatInputCommandInteraction): CommandContext {
  const caller = discordUser(i.guildId, i.user.id);
  const manageServer = i.memberPermissions?.has(PermissionFlagsBits.ManageGuild) ?? false;
  return {
    caller,
    isAdmin: d.access.isAdmin(caller, manageServer),
    memoryPageSize: DISCORD_MEMORY_PAGE,
    // A command in a thread applies to its parent channel, where the settings are kept.
    channel: i.guildId ? channelOf(conversationOf(d.client, i.guildId, i.channelId)) : undefined,
    resolveUser(raw) {
      const id = raw.match(/^<@!?(\d+)>$/)?.[1] ?? raw.match(/^(\d{5,})$/)?.[1];
      return id ? discordUser(i.guildId, id) : undefined;
    },
    resolveConversation(target) {
      if (!target) return conversationOf(d.client, i.guildId, i.channelId);
      const m = target.match(/channels\/(\d+|@me)\/(\d+)(?:\/(\d+))?/);
      if (!m) return undefined;
      const channelId = m[3] && m[1] !== "@me" ? m[3] : m[2]!;
      return conversationOf(d.client, m[1] === "@me" ? null : m[1]!, channelId);
    },
  };
}

async function render(
  i: ButtonInteraction | ChatInputCommandInteraction,
  reply: CommandReply,
): Promise<void> {
  if (reply.kind === "memory") {
    await i.editReply({ ...memoryMessage(reply.view, i.user.id), allowedMentions });
    return;
  }
  if (reply.kind === "file") {
    // The deferred reply is ephemeral: the file is for the caller only.
    await i.editReply({
      content: reply.text,
      files: [{ attachment: Buffer.from(reply.file.bytes), name: reply.file.name }],
      allowedMentions,
    });
    return;
  }
  if (reply.kind !== "reply") return;
  const [first = "", ...rest] = splitMessage(reply.text);
  const components = reply.confirm
    ? [
        {
          type: 1,
          components: [
            {
              type: 2,
              style: 4,
              label: reply.confirm.label,
              custom_id: `${CONFIRM_PREFIX}${reply.confirm.action}`,
            },
          ],
        },
      ]
    : [];
  await i.editReply({ content: first, components, allowedMentions });
  for (const content of rest) await i.followUp({ content, flags: MessageFlags.Ephemeral, allowedMentions });
}

/** `/neo <sub> [options]` → the command layer's text form, options in their documented order. */
export function commandText(i: ChatInputCommandInteraction): string {
  const sub = i.options.getSubcommand(true);
  const args = optionOrder(sub).flatMap((name) => {
    const opt = i.options.get(name);
    if (!opt || opt.value === undefined) return [];
    return [opt.type === ApplicationCommandOptionType.User ? `<@${String(opt.value)}>` : String(opt.value)];
  });
  return [sub, ...args].join(" ");
}

async function onSlash(d: InteractionDeps, i: ChatInputCommandInteraction): Promise<void> {
  await i.deferReply({ flags: MessageFlags.Ephemeral });
  // Every subcommand, as on Slack: a denied user runs none (not only `ask`).
  const speaker = speakerOf(i);
  if (!(await d.access.isAllowed(speaker.userKey))) {
    await i.editReply({
      content: "An admin has turned Neo off for you, so I can't run that.",
      allowedMentions,
    });
    return;
  }
  const ctx = contextOf(d, i);
  const reply = await runCommand(parseCommand(commandText(i)), ctx, d.commands);
  if (reply.kind !== "ask") {
    await render(i, reply);
    return;
  }
  const conversation = conversationOf(d.client, i.guildId, i.channelId);
  const io = createInteractionIO(i, d.client.rest, {
    editIntervalMs: d.editIntervalMs,
    drafts: d.drafts,
    conversation,
    store: d.store,
  });
  await i.editReply({ content: "⏳ Thinking…", allowedMentions });
  const result = await d.conversations.submit(
    {
      id: i.id,
      conversation,
      speaker,
      text: reply.text,
      shared: i.guildId !== null,
      place: interactionPlace(i),
      receivedAt: i.createdTimestamp,
    },
    io,
  );
  if (!result.accepted)
    await i.editReply({ content: `Not taken: ${result.reason.replace("_", " ")}.`, allowedMentions });
}

/** Stop: only the requester or an admin; the turn ends at its next cancellation point. */
async function onStop(
  d: InteractionDeps,
  i: ButtonInteraction,
  target: NonNullable<ReturnType<typeof parseStopCustomId>>,
): Promise<void> {
  await i.deferReply({ flags: MessageFlags.Ephemeral });
  const { isAdmin } = contextOf(d, i);
  if (i.user.id !== target.requesterId && !isAdmin) {
    await i.editReply({
      content: "Only the person who asked (or an admin) can stop this answer.",
      allowedMentions,
    });
    return;
  }
  const stopped = await d.conversations.cancel(target.conversation);
  if (stopped) await d.stopped(target.conversation);
  await i.editReply({ content: stopped ? "Stopped." : "That answer is already finished.", allowedMentions });
}

/**
 * A `/neo memory` button: the page is ephemeral (only its owner sees it), but a click is platform
 * input: someone else's is refused and changes nothing; the owner's edits the page in place.
 */
async function onMemory(d: InteractionDeps, i: ButtonInteraction, action: MemoryAction): Promise<void> {
  const ctx = contextOf(d, i);
  if (!ownsAction(ctx, action)) {
    await i.reply({
      content: "Only the person this memory belongs to can change it.",
      flags: MessageFlags.Ephemeral,
      allowedMentions,
    });
    return;
  }
  await i.deferUpdate();
  const result = await runMemoryAction(action, ctx, d.commands);
  if ("view" in result) await i.editReply({ ...memoryMessage(result.view, i.user.id), allowedMentions });
}

async function onButton(d: InteractionDeps, i: ButtonInteraction): Promise<void> {
  const stop = parseStopCustomId(i.customId, i.guildId, i.channelId);
  if (stop) {
    await onStop(d, i, stop);
    return;
  }
  if (await onFormInteraction(i)) return;
  const memory = parseMemoryAction(i.customId);
  if (memory) {
    await onMemory(d, i, memory);
    return;
  }
  const approval = parseApprovalCustomId(i.customId);
  if (approval) {
    await i.deferReply({ flags: MessageFlags.Ephemeral });
    const clicker = discordUser(i.guildId, i.user.id);
    const result = await d.broker.decide(approval.approvalId, clicker, approval.decision);
    const content = result.ok
      ? approval.decision === "approve"
        ? "Approved. Running it now; the result will show on the approval."
        : "Rejected. Nothing will run."
      : result.message;
    await i.editReply({ content, allowedMentions });
    return;
  }
  if (i.customId.startsWith(CONFIRM_PREFIX)) {
    await i.deferReply({ flags: MessageFlags.Ephemeral });
    const reply = await runConfirmed(i.customId.slice(CONFIRM_PREFIX.length), contextOf(d, i), d.commands);
    await render(i, reply);
    return;
  }
  await noLongerActive(i);
}

/** What a click on a button (or menu, modal, command) Neo no longer has says, at once. */
export const NO_LONGER_ACTIVE = "This button is no longer active.";

/** Unknown ids are answered within Discord's 3 s, privately, so the click does not hang. */
async function noLongerActive(i: Interaction): Promise<void> {
  if (!i.isRepliable()) return;
  log.debug(
    { interactionId: i.id, type: i.type },
    "discord: interaction Neo does not know; told it is inactive",
  );
  await i.reply({ content: NO_LONGER_ACTIVE, flags: MessageFlags.Ephemeral, allowedMentions });
}

export function createInteractionHandler(d: InteractionDeps): (i: Interaction) => Promise<void> {
  return async (i) => {
    try {
      if (i.isButton()) await onButton(d, i);
      // A server's question answered in its modal (type 5, MODAL_SUBMIT).
      else if (i.isModalSubmit()) {
        if (!(await onFormInteraction(i))) await noLongerActive(i);
      } else if (
        i.isChatInputCommand() &&
        (i.commandName === USER_COMMAND || i.commandName === ADMIN_COMMAND)
      ) {
        await onSlash(d, i);
      } else await noLongerActive(i);
    } catch (err) {
      log.error({ err, interactionId: i.id }, "discord interaction failed");
      if (i.isRepliable() && i.deferred) {
        await i
          .editReply({
            content: "Something went wrong on my side; nothing was changed. Try again.",
            allowedMentions,
          })
          .catch(() => undefined);
      }
    }
  };
}
