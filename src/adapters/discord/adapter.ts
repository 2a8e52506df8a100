/**
 * The Discord PlatformAdapter: a discord.js Client (REST base from `DISCORD_API_URL`), inbound
 * messages and interactions wired to the conversation layer, one IO per conversation. Nothing here
 * assumes a single process: thread membership, status lines and approvals live in the store, and
 * discord.js sharding (`SHARDS`/`SHARD_COUNT`, or ShardingManager) splits guilds across processes.
 */
import { ApplicationFlagsBitField, type Client, Events, Routes } from "discord.js";
import { z } from "zod";
import type { AccessPolicy } from "../../core/access/policy.js";
import type { DecideResult, Decision } from "../../core/approvals/types.js";
import type { CommandDeps } from "../../core/commands/index.js";
import type { ConversationIO, Conversations, PlatformAdapter } from "../../core/conversations/types.js";
import { type ConversationKey, parseConversationKey, type UserKey } from "../../core/keys.js";
import { log } from "../../core/log.js";
import type { Store } from "../../store/types.js";
import { createPayloadErrors } from "../payload-errors.js";
import { createApprovalChannel } from "./approval-channel.js";
import { createBackfill } from "./backfill.js";
import { createDiscordClient, DEFAULT_DISCORD_API_URL } from "./client.js";
import { createEditCoalescer, createPacer } from "./coalesce.js";
import { discordFileSource } from "./files.js";
import { createDiscordFormChannel, dmPoster } from "./forms.js";
import { createInboundRetry } from "./inbound-retry.js";
import { createInteractionHandler } from "./interactions.js";
import { postChannelOf } from "./keys.js";
import { createMessageHandler } from "./message-handler.js";
import { createMessageReporter, type MessageReporter, statusEditSender } from "./message-reporter.js";
import { guardPackets } from "./packet-guard.js";
import type { TypingOptions } from "./typing.js";

/** What the adapter reads from the validated config (`src/config.ts`). */
export interface DiscordAdapterConfig {
  DISCORD_TOKEN?: string;
  DISCORD_API_URL?: string;
  /** Bot user ids whose messages are answered like a person's. */
  NEO_ANSWER_BOTS?: string[];
}

export interface DiscordAdapterOptions {
  config: DiscordAdapterConfig;
  conversations: Pick<Conversations, "submit" | "cancel" | "threadReach">;
  broker: { decide(approvalId: string, clicker: UserKey, decision: Decision): Promise<DecideResult> };
  access: Pick<AccessPolicy, "isAllowed" | "isAdmin">;
  commands: CommandDeps;
  store: Store;
  /** Minimum gap between two edits of one message (status lines). Default 1,200 ms. */
  editIntervalMs?: number;
  /**
   * Minimum gap per platform call between two updates of an answer being written, per channel.
   * Default 1,500 ms: at most 4 writes in any 5 s, inside Discord's 5 per 5 s.
   */
  draftIntervalMs?: number;
  typing?: TypingOptions;
  /**
   * This process's shard group. Unset = discord.js reads `SHARDS` / `SHARD_COUNT` from the
   * environment (as ShardingManager sets them), else one shard.
   */
  shards?: { ids: number[]; count: number };
}

export interface DiscordAdapter extends PlatformAdapter {
  readonly platform: "discord";
  /** The underlying discord.js Client (for tests and diagnostics). */
  readonly client: Client;
}

/** Conversation IOs kept in memory; older ones are rebuilt on demand. */
const MAX_CACHED_IOS = 2000;

export class DiscordStartError extends Error {
  readonly code = "DISCORD_START";
}

/**
 * What to do when the privileged Message Content intent is not enabled for the app: Discord then
 * refuses the connection (close 4014) and this ends the one start-up line; should messages in
 * Neo's threads still arrive empty, it is the one warning.
 */
export const MESSAGE_CONTENT_MISSING =
  "Discord: the Message Content intent is not enabled for this application; enable it in the Developer Portal (Bot → Privileged Gateway Intents).";

function hasMessageContent(client: Client): boolean {
  const flags = client.application?.flags;
  if (!flags) return false;
  return (
    flags.has(ApplicationFlagsBitField.Flags.GatewayMessageContent) ||
    flags.has(ApplicationFlagsBitField.Flags.GatewayMessageContentLimited)
  );
}

export function createDiscordAdapter(o: DiscordAdapterOptions): DiscordAdapter {
  const token = o.config.DISCORD_TOKEN;
  const client = createDiscordClient({
    store: o.store,
    apiUrl: o.config.DISCORD_API_URL ?? DEFAULT_DISCORD_API_URL,
    ...(o.shards ? { shards: o.shards.ids, shardCount: o.shards.count } : {}),
  });
  const payloadErrors = createPayloadErrors("discord");
  guardPackets(client, payloadErrors);
  // REST works before the gateway is up, so turns resumed at start-up can post right away.
  if (token) client.rest.setToken(token);
  const editIntervalMs = o.editIntervalMs ?? 1200;
  const edits = createEditCoalescer(statusEditSender(client.rest), editIntervalMs);
  const draftIntervalMs = o.draftIntervalMs ?? 1500;
  const drafts = createPacer(draftIntervalMs);
  /** The missing-intent line is said once per process: at start-up, or at the first empty message. */
  let contentWarned = false;
  const ios = new Map<ConversationKey, ConversationIO & { reporter: MessageReporter }>();
  /** Neo's user id; before the gateway is up (a turn resumed at start-up), asked of the REST API. */
  const neoId = async (): Promise<string> =>
    client.user?.id ?? z.object({ id: z.string() }).parse(await client.rest.get(Routes.user())).id;

  const io = (conversation: ConversationKey): ConversationIO & { reporter: MessageReporter } => {
    let found = ios.get(conversation);
    if (found) return found;
    const channelId = postChannelOf(conversation);
    found = {
      reporter: createMessageReporter({
        rest: client.rest,
        store: o.store,
        edits,
        drafts,
        conversation,
        channelId,
        neoId,
        typing: o.typing,
      }),
      approvals: createApprovalChannel(client.rest, channelId),
      // A mention turn has no interaction to answer ephemerally: the question goes by DM.
      forms: createDiscordFormChannel(dmPoster(client.rest)),
      files: discordFileSource(o.config.DISCORD_API_URL),
      async acknowledgeQueued(message) {
        // The opening mention sits in the parent channel (the thread carries its id); others in the thread.
        const where = message.id === channelId ? parseConversationKey(conversation).channel : channelId;
        await client.rest.put(Routes.channelMessageOwnReaction(where, message.id, encodeURIComponent("👀")));
      },
    };
    ios.set(conversation, found);
    // Bounded: the oldest IO is dropped (its status line, if any, is found again through the store).
    if (ios.size > MAX_CACHED_IOS) {
      const [oldest] = ios.keys();
      if (oldest !== undefined && oldest !== conversation) {
        ios.get(oldest)?.reporter.end();
        ios.delete(oldest);
      }
    }
    return found;
  };

  const backfill = createBackfill(client, o.store, {
    oldestWaiting: () => inbound.oldest()?.createdTimestamp,
  });
  const onMessage = createMessageHandler({
    store: o.store,
    conversations: o.conversations,
    access: o.access,
    reporter: (c) => io(c).reporter,
    neoId: () => client.user!.id,
    catchUp: backfill,
    answerBots: new Set(o.config.NEO_ANSWER_BOTS ?? []),
    channels: o.commands.channels,
    onEmptyContent: () => {
      if (contentWarned) return;
      contentWarned = true;
      log.warn(MESSAGE_CONTENT_MISSING);
    },
  });
  const onInteraction = createInteractionHandler({
    client,
    broker: o.broker,
    access: o.access,
    commands: o.commands,
    conversations: o.conversations,
    editIntervalMs,
    drafts,
    store: o.store,
    stopped: (conversation) => ios.get(conversation)?.reporter.stopped() ?? Promise.resolve(),
  });

  const inbound = createInboundRetry(onMessage);
  client.on(Events.MessageCreate, (m) => {
    void inbound.handle(m);
  });
  // A new session (start, or a session Discord would not resume) missed whatever was sent meanwhile.
  client.on(Events.ShardReady, (shard) => {
    backfill
      .run((m) => inbound.handle(m), shard)
      .catch((err: unknown) => log.warn({ err }, "discord catch-up failed"));
  });
  client.on(Events.InteractionCreate, (i) => {
    void onInteraction(i);
  });
  client.on(Events.Error, (err) => log.error({ err }, "discord client error"));
  client.on(Events.ShardDisconnect, (_e, shard) => log.warn({ shard }, "discord shard disconnected"));

  return {
    platform: "discord",
    client,
    io,
    connected: () => client.isReady(),
    async start() {
      if (!token) throw new DiscordStartError("DISCORD_TOKEN is not set; the Discord adapter cannot start");
      const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
      try {
        await client.login(token);
      } catch (err) {
        const msg = err instanceof Error ? err.message : String(err);
        const hint = /disallowed intent/i.test(msg) ? ` — ${MESSAGE_CONTENT_MISSING}` : "";
        throw new DiscordStartError(`Discord login failed: ${msg}${hint}`, { cause: err });
      }
      await ready;
      if (!hasMessageContent(client) && !contentWarned) {
        contentWarned = true;
        log.warn(MESSAGE_CONTENT_MISSING);
      }
      log.info(
        { user: client.user?.tag, guilds: client.guilds.cache.size, shards: client.ws.shards.size },
        "discord adapter ready",
      );
    },
    async stop() {
      inbound.stop();
      backfill.stop();
      for (const entry of ios.values()) entry.reporter.end();
      await client.destroy();
    },
  };
}
