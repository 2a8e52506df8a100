/**
 * A local fake of the Slack Web API for the real @slack/web-api client (Bolt's `clientOptions.slackApiUrl`).
 * It records every call, keeps the messages Neo posted per channel (so tests can read a thread the
 * way a person sees it), serves users and thread replies, accepts `response_url` posts, and enforces
 * a rate tier per method: a call beyond the tier gets 429 + Retry-After and is recorded as a violation.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";

export interface FakeCall {
  method: string;
  args: Record<string, unknown>;
  /** The token the call carried (`Authorization: Bearer`, or a `token` argument). */
  token?: string;
  at: number;
  /** HTTP status the fake answered. */
  status: number;
  /** What the fake answered (a posted message's `ts`, for example), when it answered 200. */
  result?: unknown;
}

export interface FakeMessage {
  ts: string;
  channel: string;
  thread_ts?: string;
  text: string;
  blocks?: unknown[];
  user: string;
  bot_id?: string;
  /** Files shared with the message (Neo's uploads). */
  files?: Array<{ id: string; name: string }>;
  /** A streamed message not yet stopped (`chat.startStream` … `chat.stopStream`). */
  streaming?: boolean;
  /** Message metadata as posted; read back only with `include_all_metadata`, as Slack does. */
  metadata?: { event_type: string; event_payload?: Record<string, unknown> };
}

/** A channel `conversations.info` answers for (others: `channel_not_found`). */
export interface FakeChannel {
  id: string;
  name: string;
  is_private?: boolean;
  /** A group DM. */
  is_mpim?: boolean;
}

export interface FakeUser {
  id: string;
  name: string;
  real_name?: string;
  display_name?: string;
  is_admin?: boolean;
  is_owner?: boolean;
  is_bot?: boolean;
}

/** `scope` says what the window counts: all calls of the method, or per `channel` argument. */
export interface FakeTier {
  limit: number;
  windowMs: number;
  scope: "workspace" | "channel";
}

/** A workspace that will install the app: `oauth.v2.access` with `code` returns this bot. */
export interface FakeInstall {
  code: string;
  teamId: string;
  teamName?: string;
  botUserId: string;
  botId: string;
  token: string;
}

export interface FakeSlackOptions {
  teamId?: string;
  /** The single-workspace bot token `url_private` downloads must carry (default `xoxb-test-token`). */
  botToken?: string;
  botUserId?: string;
  botId?: string;
  users?: FakeUser[];
  channels?: FakeChannel[];
  tiers?: Record<string, FakeTier>;
  /** OAuth: the app's credentials `oauth.v2.access` checks, and the workspaces that install it. */
  oauth?: { clientId: string; clientSecret: string; installs: FakeInstall[] };
}

/** A file someone shared, served at its `url_private` to the workspace's bot token only. */
export interface FakeFile {
  id: string;
  name: string;
  mimetype: string;
  body: Buffer;
  /** The workspace the file belongs to (default the fake's team). */
  team?: string;
  /** Overrides the size the file object reports (a file that lies about its size). */
  size?: number;
}

export interface FakeUpload {
  id: string;
  filename: string;
  bytes: Buffer;
  channel: string;
  thread_ts?: string;
  comment: string;
}

export interface FakeAssistantThread {
  status?: string;
  prompts?: Array<{ title: string; message: string }>;
  promptsTitle?: string;
  title?: string;
}

/** A published App Home (`views.publish`). */
export interface FakeHomeView {
  type: "home";
  blocks: Array<Record<string, unknown>>;
}

export interface ResponseUrlPost {
  id: string;
  body: Record<string, unknown>;
}

export interface FakeSlack {
  /** Give this to the client as `slackApiUrl`. */
  apiUrl: string;
  /** Base for `response_url`s: `${baseUrl}/response/<id>`. */
  baseUrl: string;
  teamId: string;
  botUserId: string;
  botId: string;
  calls: FakeCall[];
  callsTo(method: string): FakeCall[];
  /**
   * The most successful edits of messages in `channel` (`chat.update`, `chat.appendStream`) within
   * any `windowMs` window.
   */
  busiestEditWindow(channel: string, windowMs: number): number;
  /** Calls the fake refused because they exceeded its tier. */
  violations(): FakeCall[];
  responses: ResponseUrlPost[];
  /**
   * Host a file; returns its file object as a `file_share` event carries it (@slack/types `File`:
   * id, name, mimetype, filetype, size, mode, url_private, url_private_download).
   */
  addFile(f: FakeFile): Record<string, unknown>;
  /** Files Neo uploaded and shared (files.getUploadURLExternal → upload URL → files.completeUploadExternal). */
  uploads: FakeUpload[];
  /**
   * What Neo set on an assistant thread (`assistant.threads.setStatus` / `setSuggestedPrompts` /
   * `setTitle`), keyed `channel/thread_ts`: the current status ("" = cleared), prompts and title.
   */
  assistantThread(channel: string, threadTs: string): FakeAssistantThread | undefined;
  /** The App Home view last published for `user` (`views.publish`). */
  home(user: string): FakeHomeView | undefined;
  /** Make `chat.startStream` answer `error` (a workspace that cannot stream); null streams again. */
  refuseStreams(error: string | null): void;
  /** Make every upload fail (`files.getUploadURLExternal` answers an error). */
  failUploads(on: boolean): void;
  /** Every request for a hosted file (`/files-pri/…`), with the Authorization it carried. */
  fileRequests: Array<{ path: string; authorization?: string; served: boolean }>;
  /** Messages currently visible in a channel (posted, updated, not deleted), oldest first. */
  messages(channel: string, threadTs?: string): FakeMessage[];
  /** Add a message written by someone else (for conversations.replies). */
  seedMessage(m: Omit<FakeMessage, "ts"> & { ts?: string }): FakeMessage;
  /**
   * A new ts from the clock the fake stamps posts with, for a message a test delivers as an event:
   * Slack stamps every message from one clock, so a reply's ts is after the message it answers.
   */
  nextTs(): string;
  /** Remove a channel's messages matching `drop` (what a crash kept from ever being posted). */
  removeMessages(channel: string, drop: (m: FakeMessage) => boolean): void;
  /** Revoke a workspace's bot token (as an uninstall does): calls with it get `invalid_auth`. */
  revoke(teamId: string): void;
  /** Add or change a channel (renamed, made private): what `conversations.info` answers from now on. */
  setChannel(c: FakeChannel): void;
  /** Answer the next `times` calls to `method` with 429 + Retry-After. */
  inject429(method: string, times: number, retryAfterSec?: number): void;
  /**
   * Socket Mode: deliver an Events API envelope over the app's WebSocket (opened through
   * `apps.connections.open`); resolves when the app acks the envelope.
   */
  socketSend(
    payload: Record<string, unknown>,
    type?: "events_api" | "slash_commands" | "interactive",
  ): Promise<void>;
  /** Resolves once `predicate` holds after some call (bounded by `timeoutMs`). */
  waitFor(predicate: () => boolean, what: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

async function readRaw(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** A message as a read method returns it: metadata only when the caller asked for it. */
function withMetadata(args: Record<string, unknown>): (m: FakeMessage) => FakeMessage {
  const include = args.include_all_metadata === true || args.include_all_metadata === "true";
  return ({ metadata, ...m }) => (include && metadata ? { ...m, metadata } : m);
}

function parseArgs(body: string, type: string | undefined): Record<string, unknown> {
  if (type?.includes("application/json")) return body ? (JSON.parse(body) as Record<string, unknown>) : {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of new URLSearchParams(body)) {
    const json = (k === "blocks" || k === "attachments") && v.startsWith("[");
    out[k] = json || ((k === "metadata" || k === "view") && v.startsWith("{")) ? JSON.parse(v) : v;
  }
  return out;
}

export async function startFakeSlack(options: FakeSlackOptions = {}): Promise<FakeSlack> {
  const teamId = options.teamId ?? "T0001";
  const botUserId = options.botUserId ?? "UNEO";
  const botId = options.botId ?? "BNEO";
  const users = new Map((options.users ?? []).map((u) => [u.id, u]));
  const channels = new Map((options.channels ?? []).map((c) => [c.id, c]));
  const tiers = options.tiers ?? {};
  const calls: FakeCall[] = [];
  const responses: ResponseUrlPost[] = [];
  const pendingUploads = new Map<string, { filename: string; length: number; bytes?: Buffer }>();
  const uploads: FakeUpload[] = [];
  let failUploads = false;
  let refuseStreams: string | null = null;
  const assistantThreads = new Map<string, FakeAssistantThread>();
  const homes = new Map<string, FakeHomeView>();
  const assistantThread = (args: Record<string, unknown>): FakeAssistantThread | string => {
    const channel = typeof args.channel_id === "string" ? args.channel_id : "";
    const ts = typeof args.thread_ts === "string" ? args.thread_ts : "";
    if (!channel || !ts) return "channel_id and thread_ts are required";
    const key = `${channel}/${ts}`;
    let t = assistantThreads.get(key);
    if (!t) {
      t = {};
      assistantThreads.set(key, t);
    }
    return t;
  };
  const hosted = new Map<string, FakeFile>();
  const fileRequests: FakeSlack["fileRequests"] = [];
  const store = new Map<string, FakeMessage[]>();
  const injected = new Map<string, { times: number; retryAfter: number }>();
  const waiters = new Set<() => void>();
  let seq = 0;
  const nextTs = () => `1700000000.${String(++seq).padStart(6, "0")}`;
  const channelMessages = (c: string) => {
    let list = store.get(c);
    if (!list) {
      list = [];
      store.set(c, list);
    }
    return list;
  };
  const notify = () => {
    for (const w of [...waiters]) w();
  };

  const overTier = (method: string, args: Record<string, unknown>, now: number): boolean => {
    const tier = tiers[method];
    if (!tier) return false;
    const same = calls.filter(
      (c) =>
        c.method === method &&
        c.status === 200 &&
        c.at > now - tier.windowMs &&
        (tier.scope === "workspace" || c.args.channel === args.channel),
    );
    return same.length >= tier.limit;
  };

  const installs = options.oauth?.installs ?? [];
  const usedCodes = new Set<string>();
  const revoked = new Set<string>();
  const installOfToken = (token: string | undefined) => installs.find((i) => i.token === token);

  /** A stream call's text: `markdown_text`, or its `markdown_text` chunks (what the SDK's streamer sends). */
  const streamText = (args: Record<string, unknown>): string | undefined => {
    if (typeof args.markdown_text === "string") return args.markdown_text;
    const chunks = typeof args.chunks === "string" ? JSON.parse(args.chunks) : args.chunks;
    if (!Array.isArray(chunks)) return undefined;
    return (chunks as Array<{ type?: string; text?: string }>)
      .filter((c) => c.type === "markdown_text")
      .map((c) => String(c.text ?? ""))
      .join("");
  };

  const handle = (method: string, args: Record<string, unknown>, token?: string): Record<string, unknown> => {
    const channel = String(args.channel ?? "");
    if (token && revoked.has(token)) return { ok: false, error: "invalid_auth" };
    switch (method) {
      case "oauth.v2.access": {
        // https://docs.slack.dev/reference/methods/oauth.v2.access (response shape for a bot install)
        const o = options.oauth;
        if (!o || args.client_id !== o.clientId || args.client_secret !== o.clientSecret)
          return { ok: false, error: "invalid_client_id" };
        const inst = installs.find((i) => i.code === args.code);
        if (!inst || usedCodes.has(inst.code)) return { ok: false, error: "invalid_code" };
        usedCodes.add(inst.code);
        return {
          ok: true,
          access_token: inst.token,
          token_type: "bot",
          scope: "app_mentions:read,chat:write,commands",
          bot_user_id: inst.botUserId,
          app_id: "A1",
          team: { id: inst.teamId, name: inst.teamName ?? inst.teamId },
          enterprise: null,
          is_enterprise_install: false,
          authed_user: { id: "UINSTALLER" },
        };
      }
      case "auth.test": {
        const inst = installOfToken(token);
        if (inst)
          return {
            ok: true,
            url: `https://${inst.teamId.toLowerCase()}.slack.test/`,
            team: inst.teamName ?? inst.teamId,
            user: "neo",
            team_id: inst.teamId,
            user_id: inst.botUserId,
            bot_id: inst.botId,
          };
        return {
          ok: true,
          url: "https://fake.slack.test/",
          team: "Fake",
          user: "neo",
          team_id: teamId,
          user_id: botUserId,
          bot_id: botId,
        };
      }
      case "chat.postMessage": {
        if (!channel) return { ok: false, error: "channel_not_found" };
        const text = String(args.text ?? "");
        if (text.length > 40_000) return { ok: false, error: "msg_too_long" };
        const blocks = args.blocks as unknown[] | undefined;
        if (blocks && blocks.length > 50) return { ok: false, error: "invalid_blocks" };
        // Markdown blocks: at most 12,000 characters in all per message (Block Kit reference, markdown block).
        const markdownChars = (blocks ?? [])
          .filter((b): b is { type: string; text: string } => (b as { type?: string }).type === "markdown")
          .reduce((n, b) => n + String(b.text ?? "").length, 0);
        if (markdownChars > 12_000) return { ok: false, error: "invalid_blocks" };
        const m: FakeMessage = {
          ts: nextTs(),
          channel,
          text,
          blocks,
          user: botUserId,
          bot_id: botId,
          ...(args.thread_ts ? { thread_ts: String(args.thread_ts) } : {}),
          ...(args.metadata ? { metadata: args.metadata as NonNullable<FakeMessage["metadata"]> } : {}),
        };
        channelMessages(channel).push(m);
        return { ok: true, channel, ts: m.ts, message: m };
      }
      // Streaming messages (https://docs.slack.dev/reference/methods/chat.startStream, appendStream,
      // stopStream): a stream is a reply in a thread; outside a DM it names its recipient; text is
      // appended only while the message streams, at most 12,000 characters per call.
      case "chat.startStream": {
        if (!channel) return { ok: false, error: "channel_not_found" };
        if (refuseStreams) return { ok: false, error: refuseStreams };
        if (!args.thread_ts)
          return { ok: false, error: "invalid_arguments", detail: "thread_ts is required" };
        if (!channel.startsWith("D") && (!args.recipient_user_id || !args.recipient_team_id))
          return { ok: false, error: "invalid_arguments", detail: "recipient_user_id and recipient_team_id" };
        const text = streamText(args) ?? "";
        if (text.length > 12_000) return { ok: false, error: "msg_too_long" };
        const m: FakeMessage = {
          ts: nextTs(),
          channel,
          text,
          user: botUserId,
          bot_id: botId,
          thread_ts: String(args.thread_ts),
          streaming: true,
        };
        channelMessages(channel).push(m);
        return { ok: true, channel, ts: m.ts };
      }
      case "chat.appendStream":
      case "chat.stopStream": {
        const m = channelMessages(channel).find((x) => x.ts === args.ts);
        if (!m) return { ok: false, error: "message_not_found" };
        if (!m.streaming) return { ok: false, error: "message_not_in_streaming_state" };
        const text = streamText(args);
        if (method === "chat.appendStream" && typeof text !== "string")
          return { ok: false, error: "invalid_arguments", detail: "markdown_text or chunks is required" };
        if (typeof text === "string" && text.length > 12_000) return { ok: false, error: "msg_too_long" };
        if (typeof text === "string") m.text += text;
        if (method === "chat.stopStream") {
          m.streaming = false;
          if (args.blocks !== undefined) m.blocks = args.blocks as unknown[];
        }
        return { ok: true, channel, ts: m.ts };
      }
      case "chat.update": {
        const m = channelMessages(channel).find((x) => x.ts === args.ts);
        if (!m) return { ok: false, error: "message_not_found" };
        if (String(args.text ?? "").length > 4000) return { ok: false, error: "msg_too_long" };
        m.text = String(args.text ?? m.text);
        if (args.blocks !== undefined) m.blocks = args.blocks as unknown[];
        if (args.metadata !== undefined) m.metadata = args.metadata as NonNullable<FakeMessage["metadata"]>;
        return { ok: true, channel, ts: m.ts, text: m.text };
      }
      case "chat.delete": {
        const list = channelMessages(channel);
        const i = list.findIndex((x) => x.ts === args.ts);
        if (i < 0) return { ok: false, error: "message_not_found" };
        list.splice(i, 1);
        return { ok: true, channel, ts: args.ts };
      }
      case "files.getUploadURLExternal": {
        // https://docs.slack.dev/reference/methods/files.getuploadurlexternal
        if (failUploads) return { ok: false, error: "not_allowed_token_type" };
        const filename = String(args.filename ?? "");
        const length = Number(args.length ?? 0);
        if (!filename || !(length > 0)) return { ok: false, error: "invalid_arguments" };
        const id = `F${String(++seq).padStart(8, "0")}`;
        pendingUploads.set(id, { filename, length });
        return { ok: true, upload_url: `${baseUrlOf()}/upload/${id}`, file_id: id };
      }
      case "files.completeUploadExternal": {
        // https://docs.slack.dev/reference/methods/files.completeuploadexternal: every file uploaded
        // in full; shared into channel_id (and thread_ts) with initial_comment as one message.
        const list = (typeof args.files === "string" ? JSON.parse(args.files) : args.files) as Array<{
          id: string;
          title?: string;
        }>;
        const target = String(args.channel_id ?? "");
        const done: FakeUpload[] = [];
        for (const f of list) {
          const p = pendingUploads.get(f.id);
          if (!p?.bytes || p.bytes.length !== p.length) return { ok: false, error: "file_upload_incomplete" };
          done.push({
            id: f.id,
            filename: p.filename,
            bytes: p.bytes,
            channel: target,
            ...(args.thread_ts ? { thread_ts: String(args.thread_ts) } : {}),
            comment: String(args.initial_comment ?? ""),
          });
        }
        for (const f of list) pendingUploads.delete(f.id);
        uploads.push(...done);
        if (target) {
          channelMessages(target).push({
            ts: nextTs(),
            channel: target,
            text: String(args.initial_comment ?? ""),
            user: botUserId,
            bot_id: botId,
            ...(args.thread_ts ? { thread_ts: String(args.thread_ts) } : {}),
            files: done.map((d) => ({ id: d.id, name: d.filename })),
          });
        }
        return { ok: true, files: done.map((d) => ({ id: d.id, title: d.filename })) };
      }
      // The assistant panel (https://docs.slack.dev/reference/methods/assistant.threads.setStatus,
      // setSuggestedPrompts, setTitle): each names its thread by channel_id + thread_ts. setStatus
      // needs `status` ("" clears it); prompts are 1-4 objects with title and message; a title is text.
      case "assistant.threads.setStatus": {
        const t = assistantThread(args);
        if (typeof t === "string") return { ok: false, error: "invalid_arguments", detail: t };
        if (typeof args.status !== "string")
          return { ok: false, error: "invalid_arguments", detail: "status is required" };
        t.status = args.status;
        return { ok: true };
      }
      case "assistant.threads.setSuggestedPrompts": {
        const t = assistantThread(args);
        if (typeof t === "string") return { ok: false, error: "invalid_arguments", detail: t };
        const prompts = (
          typeof args.prompts === "string" ? JSON.parse(args.prompts) : args.prompts
        ) as unknown;
        const valid =
          Array.isArray(prompts) &&
          prompts.length >= 1 &&
          prompts.length <= 4 &&
          prompts.every(
            (p: { title?: unknown; message?: unknown }) =>
              typeof p.title === "string" &&
              p.title !== "" &&
              typeof p.message === "string" &&
              p.message !== "",
          );
        if (!valid)
          return { ok: false, error: "invalid_arguments", detail: "1-4 prompts with title and message" };
        t.prompts = prompts as FakeAssistantThread["prompts"];
        if (typeof args.title === "string") t.promptsTitle = args.title;
        return { ok: true };
      }
      case "assistant.threads.setTitle": {
        const t = assistantThread(args);
        if (typeof t === "string") return { ok: false, error: "invalid_arguments", detail: t };
        if (typeof args.title !== "string" || args.title === "")
          return { ok: false, error: "invalid_arguments", detail: "title is required" };
        t.title = args.title;
        return { ok: true };
      }
      case "chat.postEphemeral":
        return { ok: true, message_ts: nextTs() };
      case "conversations.open": {
        // https://docs.slack.dev/reference/methods/conversations.open: `users` (one id) → the DM's id.
        const user = String(args.users ?? "");
        if (!users.has(user)) return { ok: false, error: "user_not_found" };
        return { ok: true, channel: { id: `D${user}` } };
      }
      case "views.publish": {
        // https://docs.slack.dev/reference/methods/views.publish: a `home` view for `user_id`, at
        // most 100 blocks (https://docs.slack.dev/reference/views/home-tab-views).
        const user = String(args.user_id ?? "");
        const view = (typeof args.view === "string" ? JSON.parse(args.view) : args.view) as
          | { type?: string; blocks?: unknown[] }
          | undefined;
        if (!users.has(user)) return { ok: false, error: "user_not_found" };
        if (view?.type !== "home" || !Array.isArray(view.blocks) || view.blocks.length > 100)
          return { ok: false, error: "invalid_arguments" };
        homes.set(user, view as FakeHomeView);
        return { ok: true, view: { id: `V${user}`, ...view } };
      }
      case "apps.connections.open":
        return { ok: true, url: `ws://127.0.0.1:${portOf()}/socket` };
      case "reactions.add":
        return { ok: true };
      case "users.info": {
        const u = users.get(String(args.user));
        if (!u) return { ok: false, error: "user_not_found" };
        return {
          ok: true,
          user: {
            id: u.id,
            team_id: teamId,
            name: u.name,
            real_name: u.real_name ?? u.name,
            is_admin: u.is_admin ?? false,
            is_owner: u.is_owner ?? false,
            is_bot: u.is_bot ?? false,
            profile: { display_name: u.display_name ?? "", real_name: u.real_name ?? u.name },
          },
        };
      }
      case "conversations.info": {
        // https://docs.slack.dev/reference/methods/conversations.info (a public or private channel)
        const c = channels.get(channel);
        if (!c) return { ok: false, error: "channel_not_found" };
        return {
          ok: true,
          channel: {
            id: c.id,
            name: c.name,
            name_normalized: c.name,
            is_channel: !c.is_private && !c.is_mpim,
            is_group: false,
            is_im: false,
            is_mpim: c.is_mpim ?? false,
            is_private: (c.is_private ?? false) || (c.is_mpim ?? false),
            is_archived: false,
            is_member: true,
            created: 1449252889,
            creator: "UADMIN",
            context_team_id: teamId,
            topic: { value: "", creator: "", last_set: 0 },
            purpose: { value: "", creator: "", last_set: 0 },
          },
        };
      }
      case "conversations.replies": {
        const ts = String(args.ts);
        // The parent first, then replies; `oldest` (exclusive unless `inclusive`) keeps later ones.
        const oldest = args.oldest === undefined ? undefined : String(args.oldest);
        const after = (m: FakeMessage) =>
          oldest === undefined || m.ts > oldest || (String(args.inclusive) === "true" && m.ts === oldest);
        const list = channelMessages(channel).filter((m) => m.ts === ts || (m.thread_ts === ts && after(m)));
        return { ok: true, messages: list.map(withMetadata(args)), has_more: false };
      }
      case "conversations.history": {
        // Top-level messages after `oldest`, newest first.
        const oldest = args.oldest === undefined ? "" : String(args.oldest);
        const list = channelMessages(channel)
          .filter((m) => (!m.thread_ts || m.thread_ts === m.ts) && m.ts > oldest)
          .reverse();
        return { ok: true, messages: list.map(withMetadata(args)), has_more: false };
      }
      default:
        return { ok: false, error: "unknown_method" };
    }
  };

  const server: Server = createServer((req, res) => {
    void (async () => {
      const raw = await readRaw(req);
      const body = raw.toString("utf8");
      const url = req.url ?? "/";
      if (url.startsWith("/upload/")) {
        // The upload URL files.getUploadURLExternal handed out: the bytes, with the bot token.
        const pendingUpload = pendingUploads.get(url.slice("/upload/".length));
        const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
        if (!pendingUpload || !bearer) {
          res.writeHead(404).end();
          return;
        }
        // Slack takes the bytes raw or as a multipart form's file (the SDK sends a form).
        const type = req.headers["content-type"] ?? "";
        let bytes = raw;
        if (type.startsWith("multipart/form-data")) {
          const form = await new Request("http://upload", {
            method: "POST",
            headers: { "content-type": type },
            body: raw,
          }).formData();
          const file = [...form.values()].find((v) => typeof v !== "string") as Blob | undefined;
          bytes = file ? Buffer.from(await file.arrayBuffer()) : Buffer.alloc(0);
        }
        pendingUpload.bytes = bytes;
        res.writeHead(200, { "content-type": "text/plain" }).end(`OK - ${bytes.length}`);
        return;
      }
      if (url.startsWith("/files-pri/")) {
        // The bot token of the file's workspace, or Slack's sign-in page (HTTP 200, HTML), as Slack
        // answers a url_private request without a token that may read it.
        const f = hosted.get(decodeURIComponent(url.split("?")[0]!));
        const team = f?.team ?? teamId;
        const allowed = [
          options.botToken ?? "xoxb-test-token",
          ...installs.filter((i) => i.teamId === team).map((i) => i.token),
        ];
        const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
        const ok = !!f && !!bearer && allowed.includes(bearer) && !revoked.has(bearer);
        fileRequests.push({
          path: url,
          ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
          served: ok,
        });
        if (!f) res.writeHead(404).end();
        else if (!ok)
          res
            .writeHead(200, { "content-type": "text/html" })
            .end("<html><body>Sign in to Slack</body></html>");
        else res.writeHead(200, { "content-type": f.mimetype, "content-length": f.body.length }).end(f.body);
        notify();
        return;
      }
      if (url.startsWith("/response/")) {
        responses.push({ id: url.slice("/response/".length), body: JSON.parse(body || "{}") });
        res.writeHead(200, { "content-type": "text/plain" });
        res.end("ok");
        notify();
        return;
      }
      const method = url.replace(/^\/api\//, "").split("?")[0]!;
      const args = parseArgs(body, req.headers["content-type"]);
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
      const token = bearer ?? (typeof args.token === "string" ? args.token : undefined);
      const now = Date.now();
      const inj = injected.get(method);
      if (inj && inj.times > 0) {
        inj.times--;
        calls.push({ method, args, at: now, status: 429 });
        res.writeHead(429, { "retry-after": String(inj.retryAfter), "content-type": "application/json" });
        res.end(JSON.stringify({ ok: false, error: "ratelimited" }));
        notify();
        return;
      }
      if (overTier(method, args, now)) {
        calls.push({ method, args, at: now, status: 429, ...{ violation: true } });
        res.writeHead(429, { "retry-after": "1", "content-type": "application/json" });
        res.end(JSON.stringify({ ok: false, error: "ratelimited" }));
        notify();
        return;
      }
      const out = handle(method, args, token);
      calls.push({ method, args, at: now, status: 200, result: out, ...(token ? { token } : {}) });
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(out));
      notify();
    })();
  });
  const wss = new WebSocketServer({ server, path: "/socket" });
  let socket: WebSocket | null = null;
  const acks = new Map<string, () => void>();
  wss.on("connection", (ws) => {
    socket = ws;
    ws.on("message", (data) => {
      const msg = JSON.parse(String(data)) as { envelope_id?: string };
      if (msg.envelope_id) acks.get(msg.envelope_id)?.();
    });
    ws.send(
      JSON.stringify({
        type: "hello",
        num_connections: 1,
        connection_info: { app_id: "A1" },
        debug_info: { host: "fake", approximate_connection_time: 3600 },
      }),
    );
    notify();
  });
  let envelopeSeq = 0;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  function portOf(): number {
    return port;
  }
  function baseUrlOf(): string {
    return `http://127.0.0.1:${port}`;
  }
  const baseUrl = `http://127.0.0.1:${port}`;

  return {
    apiUrl: `${baseUrl}/api/`,
    baseUrl,
    teamId,
    botUserId,
    botId,
    calls,
    responses,
    fileRequests,
    uploads,
    assistantThread: (channel, threadTs) => assistantThreads.get(`${channel}/${threadTs}`),
    home: (user) => homes.get(user),
    refuseStreams: (error) => {
      refuseStreams = error;
    },
    failUploads: (on) => {
      failUploads = on;
    },
    addFile: (f) => {
      const team = f.team ?? teamId;
      const path = `/files-pri/${team}-${f.id}/${f.name}`;
      hosted.set(path, f);
      const url = `${baseUrl}${path}`;
      return {
        id: f.id,
        created: Math.floor(Date.now() / 1000),
        name: f.name,
        title: f.name,
        mimetype: f.mimetype,
        filetype: f.name.split(".").pop() ?? "",
        user: "UANN",
        mode: "hosted",
        is_external: false,
        size: f.size ?? f.body.length,
        url_private: url,
        url_private_download: `${url}?download=1`,
      };
    },
    callsTo: (method) => calls.filter((c) => c.method === method && c.status === 200),
    busiestEditWindow(channel, windowMs) {
      const times = calls
        .filter(
          (c) =>
            (c.method === "chat.update" || c.method === "chat.appendStream") &&
            c.status === 200 &&
            c.args.channel === channel,
        )
        .map((c) => c.at)
        .sort((a, b) => a - b);
      let most = 0;
      for (let i = 0, j = 0; i < times.length; i++) {
        while (times[i]! - times[j]! >= windowMs) j++;
        most = Math.max(most, i - j + 1);
      }
      return most;
    },
    violations: () => calls.filter((c) => (c as FakeCall & { violation?: boolean }).violation === true),
    messages: (channel, threadTs) =>
      channelMessages(channel).filter(
        (m) => threadTs === undefined || m.thread_ts === threadTs || m.ts === threadTs,
      ),
    removeMessages: (channel, drop) => {
      store.set(
        channel,
        channelMessages(channel).filter((m) => !drop(m)),
      );
    },
    nextTs,
    seedMessage: (m) => {
      const full: FakeMessage = { ...m, ts: m.ts ?? nextTs() };
      channelMessages(m.channel).push(full);
      return full;
    },
    setChannel: (c) => {
      channels.set(c.id, c);
    },
    revoke: (team) => {
      for (const i of installs) if (i.teamId === team) revoked.add(i.token);
    },
    inject429: (method, times, retryAfterSec = 1) => {
      injected.set(method, { times, retryAfter: retryAfterSec });
    },
    socketSend: (payload, type = "events_api") =>
      new Promise<void>((resolve, reject) => {
        if (!socket) return reject(new Error("fake slack: no Socket Mode connection"));
        const envelope_id = `env-${++envelopeSeq}`;
        acks.set(envelope_id, () => {
          acks.delete(envelope_id);
          resolve();
        });
        socket.send(
          JSON.stringify({
            envelope_id,
            type,
            payload,
            accepts_response_payload: false,
            retry_attempt: 0,
            retry_reason: "",
          }),
        );
      }),
    waitFor: (predicate, what, timeoutMs = 15_000) =>
      new Promise<void>((resolve, reject) => {
        if (predicate()) return resolve();
        const check = () => {
          if (!predicate()) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`fake slack: timed out waiting for ${what}`));
        }, timeoutMs);
        waiters.add(check);
      }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of wss.clients) c.terminate();
        wss.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
