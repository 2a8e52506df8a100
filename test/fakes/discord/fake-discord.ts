/**
 * A local fake Discord that a real discord.js 14 Client logs in to: REST (`rest: { api }`) plus a
 * gateway WebSocket found through `/gateway/bot`. One guild with a text channel, an admin role with
 * Manage Server, and three people. Tests dispatch gateway events and read the recorded REST calls.
 */
import { EventEmitter } from "node:events";
import { createGateway, type FakeGateway } from "./gateway.js";
import {
  type ChannelPayload,
  dmChannel,
  type FakeMember,
  type FakeUser,
  guildPayload,
  type MessagePayload,
  member,
  message,
  role,
  snowflake,
  textChannel,
  threadChannel,
  user,
} from "./payloads.js";
import { createRestServer, type RateLimitRule, type RecordedCall, type RestState } from "./rest.js";
import { keepMessage } from "./rest-messages.js";
import { createRouteLimits, type RouteRefusal } from "./route-limits.js";

export type { RecordedCall } from "./rest.js";

/**
 * Matches a successful call that wrote a message whose content is `content` (or satisfies it): a
 * create or an edit (answers are drafts edited as the model writes), in `channelId` if given.
 */
export function wrote(
  content: string | ((text: string) => boolean),
  channelId?: string,
): (c: RecordedCall) => boolean {
  return (c) => {
    if (c.writesChannel === undefined || c.status >= 300) return false;
    if (channelId !== undefined && c.writesChannel !== channelId) return false;
    const text = (c.body as { content?: unknown } | undefined)?.content;
    if (typeof text !== "string") return false;
    return typeof content === "string" ? text === content : content(text);
  };
}

/** The most of `times` (sorted) within any `windowMs` window. */
function busiest(times: number[], windowMs: number): number {
  let most = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i]! - times[j]! >= windowMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

/** Guilds | GuildMessages | DirectMessages | MessageContent: all a Neo bot may ask for. */
const ALL_ALLOWED_INTENTS = 1 | (1 << 9) | (1 << 12) | (1 << 15);
/** The privileged MESSAGE_CONTENT gateway intent. */
const INTENT_MESSAGE_CONTENT = 1 << 15;
/** READY application flag: GATEWAY_MESSAGE_CONTENT enabled for this app (verified apps). */
export const FLAG_MESSAGE_CONTENT = 1 << 18;
/** READY application flag: GATEWAY_MESSAGE_CONTENT_LIMITED, the Developer Portal toggle (unverified apps). */
export const FLAG_MESSAGE_CONTENT_LIMITED = 1 << 19;
const MANAGE_GUILD = 1n << 5n;
const VIEW_CHANNEL = 1n << 10n;
const BASIC_PERMS = (1n << 10n) | (1n << 11n) | (1n << 31n); // view, send, use application commands

export interface FakeDiscordOptions {
  /**
   * READY `application.flags`; without a message-content flag the gateway refuses Neo's IDENTIFY
   * (4014), as Discord does for a privileged intent the app has not enabled.
   */
  applicationFlags?: number;
  heartbeatIntervalMs?: number;
  /**
   * Add `staff`, a text channel @everyone may not view (a permission overwrite on the @everyone
   * role, whose id is the guild's, denies VIEW_CHANNEL), with Neo, Alice and Bob allowed by member
   * overwrites: Discord's shape of a private channel
   * (https://discord.com/developers/docs/resources/channel#overwrite-object).
   */
  privateChannel?: boolean;
  /**
   * A second guild (`otherGuildId`, with its `otherChannel`), its id one millisecond of snowflake
   * time after the first's, so with 2 shards each guild is on its own shard ((id >> 22) % 2).
   */
  secondGuild?: boolean;
  /**
   * Enforce Discord's per-route limits (route-limits.ts: 5 message writes per 5 s per channel, …)
   * with their `X-RateLimit-*` headers on every answer, as Discord does. Off by default: most tests
   * are about something else.
   */
  routeLimits?: boolean;
}

export interface InteractionOptions {
  user: FakeUser;
  channel?: ChannelPayload;
  /** Defaults to the member's roles' permissions in the fake guild. */
  permissions?: bigint;
}

export class FakeDiscord {
  readonly token = `fake.${snowflake()}.token`;
  readonly appId: string;
  readonly bot: FakeUser;
  readonly guildId = snowflake();
  readonly adminRoleId = snowflake();
  readonly channel: ChannelPayload;
  /** With `secondGuild`; else undefined. */
  readonly otherGuildId: string | undefined;
  readonly otherChannel: ChannelPayload | undefined;
  /** With `privateChannel`; else undefined. */
  readonly staffChannel: ChannelPayload | undefined;
  readonly alice = user("alice", { globalName: "Alice" });
  readonly bob = user("bob", { globalName: "Bob" });
  readonly carol = user("carol", { globalName: "Carol" });
  readonly otherBot = user("helperbot", { bot: true });
  readonly members: Map<string, FakeMember>;
  readonly calls: RecordedCall[] = [];
  apiBase = "";
  gateway!: FakeGateway;
  private readonly events = new EventEmitter();
  private readonly state: RestState;
  private readonly rest: ReturnType<typeof createRestServer>;
  private readonly options: FakeDiscordOptions;

  constructor(options: FakeDiscordOptions = {}) {
    this.options = options;
    this.bot = user("neo", { bot: true, globalName: "Neo" });
    this.appId = this.bot.id;
    this.channel = textChannel(this.guildId, "general");
    this.otherGuildId = options.secondGuild ? (BigInt(this.guildId) + (1n << 22n)).toString() : undefined;
    this.otherChannel = this.otherGuildId ? textChannel(this.otherGuildId, "general") : undefined;
    this.staffChannel = options.privateChannel
      ? {
          ...textChannel(this.guildId, "staff"),
          permission_overwrites: [
            { id: this.guildId, type: 0, allow: "0", deny: String(VIEW_CHANNEL) },
            ...[this.bot, this.alice, this.bob].map((u) => ({
              id: u.id,
              type: 1,
              allow: String(VIEW_CHANNEL),
              deny: "0",
            })),
          ],
        }
      : undefined;
    this.members = new Map([
      [this.bot.id, member(this.bot)],
      [this.alice.id, member(this.alice)],
      [this.bob.id, member(this.bob)],
      [this.carol.id, member(this.carol, [this.adminRoleId], "Carol the Admin")],
    ]);
    this.events.setMaxListeners(0);
    this.state = {
      token: this.token,
      appId: this.appId,
      bot: this.bot,
      gatewayUrl: () => this.gateway.url,
      applicationFlags: options.applicationFlags ?? FLAG_MESSAGE_CONTENT,
      channels: new Map([
        [this.channel.id, this.channel],
        ...(this.staffChannel ? ([[this.staffChannel.id, this.staffChannel]] as const) : []),
        ...(this.otherChannel ? ([[this.otherChannel.id, this.otherChannel]] as const) : []),
      ]),
      messages: new Map(),
      interactionChannels: new Map(),
      componentMessages: new Map(),
      modals: new Map(),
      dms: new Map(),
      calls: this.calls,
      rateLimits: [],
      globalArrivals: [],
      globalLimit: { limit: 50, windowMs: 1000 },
      ...(options.routeLimits ? { routeLimits: createRouteLimits() } : {}),
      onCall: (call) => this.events.emit("call", call),
      cdn: new Map(),
      cdnRequests: [],
      uploads: [],
      refuseUploads: false,
      guildId: this.guildId,
      guildIds: new Set([this.guildId, ...(this.otherGuildId ? [this.otherGuildId] : [])]),
      members: this.members,
      roles: () => this.roles(),
    };
    this.rest = createRestServer(this.state);
  }

  async start(): Promise<this> {
    this.apiBase = await this.rest.listen();
    const state = this.state;
    this.gateway = await createGateway({
      token: this.token,
      // Discord closes an IDENTIFY asking for a privileged intent the app has not enabled (4014).
      get allowedIntents() {
        return state.applicationFlags & (FLAG_MESSAGE_CONTENT | FLAG_MESSAGE_CONTENT_LIMITED)
          ? ALL_ALLOWED_INTENTS
          : ALL_ALLOWED_INTENTS & ~INTENT_MESSAGE_CONTENT;
      },
      heartbeatIntervalMs: this.options.heartbeatIntervalMs ?? 41_250,
      ready: () => ({
        v: 10,
        user: { ...this.bot, verified: true, mfa_enabled: false, flags: 0 },
        shard: [0, 1],
        application: { id: this.appId, flags: this.state.applicationFlags },
        private_channels: [],
        relationships: [],
        presences: [],
        guild_join_requests: [],
        geo_ordered_rtc_regions: [],
        user_settings: {},
      }),
      guildCreates: () => [
        this.guildPayload(this.guildId, this.roles()),
        ...[...this.state.guildIds]
          .filter((id) => id !== this.guildId)
          .map((id) => this.guildPayload(id, [role(id, "@everyone", BASIC_PERMS, 0)])),
      ],
    });
    return this;
  }

  private roles(): Record<string, unknown>[] {
    return [
      role(this.guildId, "@everyone", BASIC_PERMS, 0),
      role(this.adminRoleId, "admins", BASIC_PERMS | MANAGE_GUILD, 1),
    ];
  }

  private guildPayload(id: string, roles: Record<string, unknown>[]): Record<string, unknown> {
    const channels = [...this.state.channels.values()].filter((c) => c.guild_id === id);
    return guildPayload({
      id,
      ownerId: this.alice.id,
      roles,
      channels,
      members: [...this.members.values()].filter((m) => !this.unlisted.has(m.user.id)),
    });
  }

  /**
   * One more guild (before the bot connects), with `channels` text channels, its id one snowflake
   * millisecond after the last guild's, so successive guilds fall on successive shards
   * ((id >> 22) % count). Every member is in it.
   */
  addGuild(channels: number): { id: string; channels: ChannelPayload[] } {
    const last = [...this.state.guildIds].at(-1)!;
    const id = (BigInt(last) + (1n << 22n)).toString();
    this.state.guildIds.add(id);
    const list = Array.from({ length: channels }, (_, i) => textChannel(id, `room-${i}`));
    for (const c of list) this.state.channels.set(c.id, c);
    return { id, channels: list };
  }

  /** One more person, a member of every guild (listed in GUILD_CREATE). */
  addMember(u: FakeUser): FakeMember {
    const m = member(u);
    this.members.set(u.id, m);
    return m;
  }

  /** Requests refused for a per-route limit (with `routeLimits`). */
  routeRefusals(): RouteRefusal[] {
    return this.state.routeLimits?.refusals ?? [];
  }

  /** Member ids left out of GUILD_CREATE (a large guild sends only some): reachable by REST only. */
  private readonly unlisted = new Set<string>();

  /**
   * A guild member Neo's client does not have cached: not in GUILD_CREATE's members, served by
   * `GET /guilds/{id}/members/{user}` (and `GET /users/{id}`).
   */
  addUnlistedMember(u: FakeUser, nick: string | null = null): FakeMember {
    const m = member(u, [], nick);
    this.members.set(u.id, m);
    this.unlisted.add(u.id);
    return m;
  }

  /** Answer the next `times` calls matching method+path with 429 (retry after `retryAfterSec`). */
  rateLimit(
    method: string,
    path: RegExp,
    retryAfterSec: number,
    times = 1,
    when?: (body: unknown) => boolean,
  ): RateLimitRule {
    const rule: RateLimitRule = { method, path, retryAfterSec, remaining: times, ...(when ? { when } : {}) };
    this.state.rateLimits.push(rule);
    return rule;
  }

  set applicationFlags(flags: number) {
    this.state.applicationFlags = flags;
  }

  /**
   * The most requests the bot sent (every client, refused ones too) within any `windowMs` window,
   * interaction endpoints aside: what Discord's global limit (50 a second) counts.
   */
  busiestGlobalWindow(windowMs = this.state.globalLimit.windowMs): number {
    return busiest(
      [...this.state.globalArrivals].sort((a, b) => a - b),
      windowMs,
    );
  }

  /** Requests refused for the global limit (429 with `global: true`). */
  globalRefusals(): RecordedCall[] {
    return this.calls.filter(
      (c) => c.status === 429 && (c.response as { global?: boolean })?.global === true,
    );
  }

  /**
   * The most message writes (creates and edits, successful) the bot made in `channelId` within any
   * `windowMs` window: Discord allows 5 per 5 s per channel.
   */
  busiestWindow(channelId: string, windowMs = 5000): number {
    const times = this.calls
      .filter((c) => c.writesChannel === channelId && c.status < 300)
      .map((c) => c.at)
      .sort((a, b) => a - b);
    return busiest(times, windowMs);
  }

  channelMessages(channelId: string): MessagePayload[] {
    return this.state.messages.get(channelId) ?? [];
  }

  channelById(id: string): ChannelPayload | undefined {
    return this.state.channels.get(id);
  }

  /** Resolves with the first recorded call (past or future) satisfying `pred`. */
  waitForCall(
    pred: (c: RecordedCall) => boolean,
    label = "REST call",
    timeoutMs = 10_000,
  ): Promise<RecordedCall> {
    const found = this.calls.find(pred);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.events.off("call", on);
        reject(
          new Error(
            `timed out waiting for ${label}; calls: ${this.calls.map((c) => `${c.method} ${c.path}`).join(", ")}`,
          ),
        );
      }, timeoutMs);
      const on = (c: RecordedCall): void => {
        if (!pred(c)) return;
        clearTimeout(timer);
        this.events.off("call", on);
        resolve(c);
      };
      this.events.on("call", on);
    });
  }

  /** Files the bot attached to the messages it created (multipart `files[n]`), with their bytes. */
  get uploads(): RestState["uploads"] {
    return this.state.uploads;
  }

  /** Refuse messages with files (413 "Request entity too large", code 40005), or take them again. */
  refuseUploads(on: boolean): void {
    this.state.refuseUploads = on;
  }

  /**
   * Discord checks a nonce (`enforce_nonce`) against the last few minutes only: after this, every
   * nonce sent so far is new again (a restart that took longer than that window).
   */
  nonceWindowPassed(): void {
    for (const list of this.state.messages.values()) for (const m of list) delete m.nonce;
  }

  /** Every request the CDN saw (path, Authorization, whether it served the file). */
  get cdnRequests(): RestState["cdnRequests"] {
    return this.state.cdnRequests;
  }

  /**
   * Host a file on the fake CDN and return the message attachment for it, in the shape of Discord's
   * Attachment object (discord.com/developers/docs/resources/message#attachment-object): id,
   * filename, content_type, size, url and proxy_url signed with `ex` (hex expiry), `is` and `hm`.
   * `channelId` is the channel the URL names; `expired` dates the expiry an hour back.
   */
  attachment(
    channelId: string,
    f: { name: string; type: string; body: Buffer; size?: number; expired?: boolean },
  ): Record<string, unknown> {
    const id = snowflake();
    const path = `/attachments/${channelId}/${id}/${f.name}`;
    const now = Math.floor(Date.now() / 1000);
    const ex = f.expired ? now - 3600 : now + 86_400;
    const hm = `sig${id}`;
    this.state.cdn.set(path, { body: f.body, type: f.type, hm, ex });
    const origin = new URL(this.apiBase).origin;
    const url = `${origin}${path}?ex=${ex.toString(16)}&is=${(now - 60).toString(16)}&hm=${hm}&`;
    return {
      id,
      filename: f.name,
      size: f.size ?? f.body.length,
      url,
      proxy_url: url,
      content_type: f.type,
    };
  }

  /** Post a guild or DM message as a person (MESSAGE_CREATE), stored so history fetches see it. */
  async say(
    author: FakeUser,
    channel: ChannelPayload,
    content: string,
    opts: { mentionBot?: boolean; referenced?: MessagePayload; extra?: Record<string, unknown> } = {},
  ): Promise<MessagePayload> {
    const text = opts.mentionBot ? `<@${this.bot.id}> ${content}` : content;
    const msg = message({
      channel,
      author,
      content: text,
      member: this.members.get(author.id),
      mentions: opts.mentionBot ? [this.bot] : [],
      referenced: opts.referenced,
      extra: opts.extra,
    });
    this.store(channel.id, msg);
    await this.gateway.dispatch("MESSAGE_CREATE", msg);
    return msg;
  }

  /** Put a message in a channel's history without dispatching it (earlier conversation). */
  store(channelId: string, msg: MessagePayload): void {
    keepMessage(this.state, channelId, msg);
  }

  /** A DM channel between the bot and `who` (announced on first message through channel_type). */
  dm(who: FakeUser): ChannelPayload {
    const ch = dmChannel(who);
    this.state.channels.set(ch.id, ch);
    return ch;
  }

  /** A thread someone else opened in the text channel; THREAD_CREATE is dispatched. */
  async openThread(owner: FakeUser, name: string): Promise<ChannelPayload> {
    const th = threadChannel(this.guildId, this.channel.id, owner.id, name);
    this.state.channels.set(th.id, th);
    await this.gateway.dispatch("THREAD_CREATE", { ...th, newly_created: true });
    return th;
  }

  private memberPermissions(u: FakeUser): bigint {
    const m = this.members.get(u.id);
    return m?.roles.includes(this.adminRoleId) ? BASIC_PERMS | MANAGE_GUILD : BASIC_PERMS;
  }

  private interactionBase(
    type: number,
    o: InteractionOptions,
  ): Record<string, unknown> & { token: string; id: string } {
    const channel = o.channel ?? this.channel;
    const token = `itok_${snowflake()}`;
    this.state.interactionChannels.set(token, channel.id);
    const perms = String(o.permissions ?? this.memberPermissions(o.user));
    const guildId = channel.guild_id as string | undefined;
    const m = this.members.get(o.user.id);
    return {
      id: snowflake(),
      application_id: this.appId,
      type,
      token,
      version: 1,
      channel_id: channel.id,
      channel: { ...channel },
      ...(guildId
        ? {
            guild_id: guildId,
            member: { ...(m ?? member(o.user)), permissions: perms },
            guild: { id: guildId, features: [], locale: "en-US" },
          }
        : { user: o.user }),
      app_permissions: String(BASIC_PERMS),
      locale: "en-US",
      guild_locale: "en-US",
      entitlements: [],
      authorizing_integration_owners: { "0": this.guildId },
      context: guildId ? 0 : 1,
      attachment_size_limit: 10_485_760,
    };
  }

  /** A `/neo <sub> [options]` slash command (INTERACTION_CREATE type 2). Returns its token. */
  async slash(
    o: InteractionOptions & {
      command?: string;
      sub: string;
      options?: Array<{ name: string; type: number; value: unknown }>;
    },
  ): Promise<string> {
    const base = this.interactionBase(2, o);
    await this.gateway.dispatch("INTERACTION_CREATE", {
      ...base,
      data: {
        id: snowflake(),
        name: o.command ?? "neo",
        type: 1,
        options: [{ name: o.sub, type: 1, options: o.options ?? [] }],
      },
    });
    return base.token;
  }

  /** A button click on a bot message (INTERACTION_CREATE type 3). Returns its token. */
  async click(o: InteractionOptions & { message: MessagePayload; customId: string }): Promise<string> {
    const base = this.interactionBase(3, {
      ...o,
      channel: o.channel ?? this.channelById(o.message.channel_id),
    });
    this.state.componentMessages.set(base.token, o.message.id);
    await this.gateway.dispatch("INTERACTION_CREATE", {
      ...base,
      message: o.message,
      data: { custom_id: o.customId, component_type: 2 },
    });
    return base.token;
  }

  /** The modal shown in answer to the interaction with this token (callback type 9), if any. */
  modalShown(token: string): Record<string, unknown> | undefined {
    return this.state.modals.get(token);
  }

  /** The DM channel the bot opened with this user (`POST /users/@me/channels`), if any. */
  dmWith(u: FakeUser): ChannelPayload | undefined {
    const id = this.state.dms.get(u.id);
    return id ? this.state.channels.get(id) : undefined;
  }

  /**
   * A modal submitted (INTERACTION_CREATE type 5, MODAL_SUBMIT): each value as the text input with
   * that custom_id, one per action row, as Discord sends them. Returns its token.
   */
  async submitModal(
    o: InteractionOptions & { customId: string; values: Record<string, string>; message?: MessagePayload },
  ): Promise<string> {
    const base = this.interactionBase(5, {
      ...o,
      channel: o.channel ?? (o.message ? this.channelById(o.message.channel_id) : undefined),
    });
    await this.gateway.dispatch("INTERACTION_CREATE", {
      ...base,
      ...(o.message ? { message: o.message } : {}),
      data: {
        custom_id: o.customId,
        components: Object.entries(o.values).map(([id, value]) => ({
          type: 1,
          components: [{ type: 4, custom_id: id, value }],
        })),
      },
    });
    return base.token;
  }

  async close(): Promise<void> {
    await this.gateway.close();
    await new Promise<void>((resolve) => {
      this.rest.server.closeAllConnections();
      this.rest.server.close(() => resolve());
    });
  }
}

export async function startFakeDiscord(options: FakeDiscordOptions = {}): Promise<FakeDiscord> {
  return new FakeDiscord(options).start();
}
