/**
 * The fake Discord REST API (node:http). Serves what a discord.js bot calls, keeps channels and
 * messages in memory, records every call, and can answer the next matching call with a 429 carrying
 * the headers and body `@discordjs/rest` reads to wait it out. It enforces Discord's global limit:
 * 50 requests in any second per bot token, interaction endpoints exempt
 * (discord.com/developers/docs/topics/rate-limits#global-rate-limit); a request beyond it is
 * answered 429 with `X-RateLimit-Global`, as Discord answers, and every bot request's arrival is
 * kept for counting per window across every client (`globalArrivals`).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { modalProblem } from "./modals.js";
import {
  type ChannelPayload,
  dmChannel,
  type FakeMember,
  type FakeUser,
  type MessagePayload,
  snowflake,
  threadChannel,
} from "./payloads.js";
import { createMessageBook, type Handler, noContent, notFound, ok, type Reply } from "./rest-messages.js";
import type { RouteLimits } from "./route-limits.js";

export interface RecordedCall {
  method: string;
  /** Path after `/api/v10`, e.g. `/channels/1/messages`. */
  path: string;
  query: Record<string, string>;
  body: unknown;
  /** Whether the request carried `Authorization: Bot <token>`. */
  authed: boolean;
  status: number;
  /** What the fake answered (the created message, for example). */
  response: unknown;
  seq: number;
  /** When the fake answered it (ms since the epoch): for counting calls per window. */
  at: number;
  /** When it arrived (ms since the epoch): what the global limit counts. */
  arrived: number;
  /** The channel whose messages it writes (create or edit, by bot or interaction webhook), if any. */
  writesChannel?: string;
}

export interface RateLimitRule {
  method: string;
  path: RegExp;
  retryAfterSec: number;
  remaining: number;
  /** Refuse as Discord refuses for its global limit (`global: true`, `X-RateLimit-Global`). */
  global?: boolean;
  /** Only calls whose body satisfies this are refused. */
  when?: (body: unknown) => boolean;
}

export interface RestState {
  token: string;
  appId: string;
  bot: FakeUser;
  gatewayUrl: () => string;
  applicationFlags: number;
  channels: Map<string, ChannelPayload>;
  /** Messages per channel, oldest first. */
  messages: Map<string, MessagePayload[]>;
  /** Interaction token -> the channel its replies land in. */
  interactionChannels: Map<string, string>;
  /**
   * A component interaction's token -> the message its component is on: after an UPDATE_MESSAGE
   * or DEFERRED_UPDATE_MESSAGE callback (types 7, 6), `@original` is that message
   * (discord.com/developers/docs/interactions/receiving-and-responding#interaction-response-object-interaction-callback-type).
   */
  componentMessages: Map<string, string>;
  /** Modals shown (interaction callback type 9), by the interaction's token. */
  modals: Map<string, Record<string, unknown>>;
  /** DM channels opened by the bot (`POST /users/@me/channels`), by recipient id. */
  dms: Map<string, string>;
  calls: RecordedCall[];
  rateLimits: RateLimitRule[];
  /** Arrival times of the bot's requests the global limit counts (every client, accepted or not). */
  globalArrivals: number[];
  /** The global limit enforced: at most `limit` accepted bot requests in any `windowMs`. */
  globalLimit: { limit: number; windowMs: number };
  /** Per-route limits (route-limits.ts), when the fake enforces them. */
  routeLimits?: RouteLimits;
  onCall: (call: RecordedCall) => void;
  /** Attachments the CDN serves, by path (`/attachments/<channel>/<id>/<name>`). */
  cdn: Map<string, CdnFile>;
  /** Every CDN request, with the Authorization it carried (signed URLs need none). */
  cdnRequests: Array<{ path: string; authorization?: string; served: boolean }>;
  /** Files the bot attached to messages it created, in order, with their bytes. */
  uploads: FakeUpload[];
  /** Refuse every message with files as Discord refuses a too-large one (413, code 40005). */
  refuseUploads: boolean;
  /** The fake guilds (the first one's roles are `roles`); members (by user id, also the users `GET /users/{id}` knows) are in each. */
  guildId: string;
  guildIds: Set<string>;
  members: Map<string, FakeMember>;
  roles: () => Record<string, unknown>[];
}

/** A file attached to a created message (multipart `files[n]`, named by `payload_json.attachments`). */
export interface FakeUpload {
  channelId: string;
  messageId: string;
  filename: string;
  contentType: string;
  bytes: Buffer;
}

/** A file on the CDN: served only with its signature (`hm`) and before its expiry (`ex`, hex seconds). */
export interface CdnFile {
  body: Buffer;
  type: string;
  hm: string;
  ex: number;
}

export function createRestServer(state: RestState): { server: Server; listen(): Promise<string> } {
  const { msgs, createMessage, editMessage, deleteMessage, original, recordUploads } =
    createMessageBook(state);

  const routes: Array<[string, RegExp, Handler]> = [
    [
      "GET",
      /^\/gateway\/bot$/,
      () =>
        ok({
          url: state.gatewayUrl(),
          shards: 1,
          session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 },
        }),
    ],
    ["GET", /^\/users\/@me$/, () => ok(state.bot)],
    // https://discord.com/developers/docs/resources/user#get-user (10013 Unknown User)
    [
      "GET",
      /^\/users\/(\d+)$/,
      (m) => {
        const u = state.members.get(m[1]!)?.user;
        return u ? ok(u) : notFound("User", 10013);
      },
    ],
    // https://discord.com/developers/docs/resources/guild#get-guild-member (10007 Unknown Member)
    [
      "GET",
      /^\/guilds\/(\d+)\/members\/(\d+)$/,
      (m) => {
        const mem = state.guildIds.has(m[1]!) ? state.members.get(m[2]!) : undefined;
        return mem ? ok(mem) : notFound("Member", 10007);
      },
    ],
    // https://discord.com/developers/docs/resources/guild#get-guild-roles
    [
      "GET",
      /^\/guilds\/(\d+)\/roles$/,
      (m) => (m[1] === state.guildId ? ok(state.roles()) : notFound("Guild", 10004)),
    ],
    [
      "GET",
      /^\/applications\/@me$/,
      () => ok({ id: state.appId, name: "Neo", flags: state.applicationFlags, bot: state.bot }),
    ],
    [
      "GET",
      /^\/channels\/(\d+)$/,
      (m) => {
        const ch = state.channels.get(m[1]!);
        return ch ? ok(ch) : notFound("Channel");
      },
    ],
    [
      "GET",
      /^\/channels\/(\d+)\/messages$/,
      (m, _b, q) => {
        const limit = Number(q.limit ?? 50);
        // Discord answers 400 Invalid Form Body (50035) for `before`/`after` that are not snowflakes.
        if ([q.before, q.after].some((v) => v !== undefined && !/^\d+$/.test(v)))
          return { status: 400, json: { message: "Invalid Form Body", code: 50035 } };
        let list = [...msgs(m[1]!)];
        if (q.before) list = list.filter((x) => BigInt(x.id) < BigInt(q.before!));
        // Like Discord: `after` gives the `limit` messages right after it, newest first.
        if (q.after)
          return ok(
            list
              .filter((x) => BigInt(x.id) > BigInt(q.after!))
              .slice(0, limit)
              .reverse(),
          );
        return ok(list.reverse().slice(0, limit));
      },
    ],
    [
      "GET",
      /^\/channels\/(\d+)\/messages\/(\d+)$/,
      (m) => {
        const msg = msgs(m[1]!).find((x) => x.id === m[2]);
        return msg ? ok(msg) : notFound("Message");
      },
    ],
    [
      "POST",
      /^\/channels\/(\d+)\/messages$/,
      (m, b) => {
        if (!state.channels.has(m[1]!)) return notFound("Channel");
        return ok(createMessage(m[1]!, b));
      },
    ],
    ["PATCH", /^\/channels\/(\d+)\/messages\/(\d+)$/, (m, b) => editMessage(m[1]!, m[2]!, b)],
    ["DELETE", /^\/channels\/(\d+)\/messages\/(\d+)$/, (m) => deleteMessage(m[1]!, m[2]!)],
    ["POST", /^\/channels\/(\d+)\/typing$/, () => noContent],
    [
      "POST",
      /^\/users\/@me\/channels$/,
      (_m, b) => {
        const recipient = state.members.get(String(b.recipient_id))?.user;
        if (!recipient) return notFound("User");
        const known = state.dms.get(recipient.id);
        if (known) return ok(state.channels.get(known));
        const dm = dmChannel(recipient);
        state.channels.set(dm.id, dm);
        state.dms.set(recipient.id, dm.id);
        return ok(dm);
      },
    ],
    ["PUT", /^\/channels\/(\d+)\/messages\/(\d+)\/reactions\/[^/]+\/@me$/, () => noContent],
    [
      "POST",
      /^\/channels\/(\d+)\/messages\/(\d+)\/threads$/,
      (m, b) => {
        const parent = state.channels.get(m[1]!);
        if (!parent) return notFound("Channel");
        if (state.channels.has(m[2]!)) {
          return {
            status: 400,
            json: { message: "A thread has already been created for this message", code: 160004 },
          };
        }
        // Discord gives a thread started from a message the message's id.
        const thread = threadChannel(
          parent.guild_id as string,
          parent.id,
          state.bot.id,
          String(b.name),
          m[2]!,
        );
        state.channels.set(thread.id, thread);
        return { status: 201, json: thread };
      },
    ],
    [
      "POST",
      /^\/interactions\/(\d+)\/([^/]+)\/callback$/,
      (m, b) => {
        const token = m[2]!;
        const channelId = state.interactionChannels.get(token);
        const data = (b.data ?? {}) as Record<string, unknown>;
        if (b.type === 9) {
          const problem = modalProblem(data);
          if (problem)
            return { status: 400, json: { message: `Invalid Form Body (${problem})`, code: 50035 } };
          state.modals.set(token, data);
          return noContent;
        }
        // 4 = reply, 5 = deferred reply: both create the original response message.
        if (channelId && (b.type === 4 || b.type === 5)) {
          const msg = createMessage(channelId, b.type === 4 ? data : { flags: data.flags }, true);
          msg.interaction_token = token;
          msg.original = true;
        }
        // 7 = update the component's message now (6, deferred, changes nothing until @original is edited).
        const clicked = state.componentMessages.get(token);
        if (channelId && b.type === 7 && clicked) editMessage(channelId, clicked, data);
        return noContent;
      },
    ],
    [
      "PATCH",
      /^\/webhooks\/(\d+)\/([^/]+)\/messages\/@original$/,
      (m, b) => {
        const { channelId, msg } = original(m[2]!);
        return msg ? editMessage(channelId, msg.id, b) : notFound("Message");
      },
    ],
    [
      "DELETE",
      /^\/webhooks\/(\d+)\/([^/]+)\/messages\/@original$/,
      (m) => {
        const { channelId, msg } = original(m[2]!);
        return msg ? deleteMessage(channelId, msg.id) : notFound("Message");
      },
    ],
    [
      "POST",
      /^\/webhooks\/(\d+)\/([^/]+)$/,
      (m, b) => {
        const channelId = state.interactionChannels.get(m[2]!);
        if (!channelId) return notFound("Webhook");
        const msg = createMessage(channelId, b, true);
        msg.interaction_token = m[2];
        return ok(msg);
      },
    ],
    [
      "DELETE",
      /^\/webhooks\/(\d+)\/([^/]+)\/messages\/(\d+)$/,
      (m) => {
        const channelId = state.interactionChannels.get(m[2]!);
        return channelId ? deleteMessage(channelId, m[3]!) : notFound("Webhook");
      },
    ],
    [
      "PATCH",
      /^\/webhooks\/(\d+)\/([^/]+)\/messages\/(\d+)$/,
      (m, b) => {
        const channelId = state.interactionChannels.get(m[2]!);
        return channelId ? editMessage(channelId, m[3]!, b) : notFound("Webhook");
      },
    ],
    [
      "PUT",
      /^\/applications\/(\d+)(\/guilds\/\d+)?\/commands$/,
      (_m, b) =>
        ok(
          (b as unknown as Array<Record<string, unknown>>).map((c) => ({
            ...c,
            id: snowflake(),
            version: "1",
          })),
        ),
    ],
  ];

  /** Message creates and edits, by channel: what Discord's per-channel message limit counts. */
  const writeTarget = (method: string, path: string): { writesChannel?: string } => {
    if (method !== "POST" && method !== "PATCH") return {};
    const direct = path.match(/^\/channels\/(\d+)\/messages(\/\d+)?$/);
    if (direct) return { writesChannel: direct[1]! };
    const hook = path.match(/^\/webhooks\/\d+\/([^/]+)(\/messages\/(\d+|@original))?$/);
    const channel = hook ? state.interactionChannels.get(hook[1]!) : undefined;
    return channel ? { writesChannel: channel } : {};
  };

  const server = createServer((req, res) => {
    void handle(req, res);
  });

  /** Accepted bot requests still in the global window (arrival times, oldest first). */
  let accepted: number[] = [];
  /** Whether a bot request arriving `now` is over the global limit; counted when it is not. */
  const overGlobal = (now: number): boolean => {
    accepted = accepted.filter((t) => t > now - state.globalLimit.windowMs);
    if (accepted.length >= state.globalLimit.limit) return true;
    accepted.push(now);
    return false;
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const arrived = Date.now();
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    const url = new URL(req.url ?? "/", "http://fake");
    if (url.pathname.startsWith("/attachments/")) {
      // The CDN: a signed URL past its expiry, or with a wrong signature, is "no longer available".
      const f = state.cdn.get(decodeURIComponent(url.pathname));
      const ok =
        !!f &&
        url.searchParams.get("hm") === f.hm &&
        Number.parseInt(url.searchParams.get("ex") ?? "0", 16) === f.ex &&
        f.ex * 1000 > Date.now();
      state.cdnRequests.push({
        path: url.pathname,
        ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
        served: ok,
      });
      if (!ok || !f)
        res.writeHead(404, { "content-type": "text/plain" }).end("This content is no longer available.");
      else res.writeHead(200, { "content-type": f.type, "content-length": f.body.length }).end(f.body);
      return;
    }
    const path = decodeURIComponent(url.pathname).replace(/^\/api\/v\d+/, "");
    const method = req.method ?? "GET";
    const type = req.headers["content-type"] ?? "";
    const form = type.startsWith("multipart/form-data") ? await readForm(Buffer.concat(chunks), type) : null;
    const body: unknown = form ? form.body : raw && type.includes("json") ? JSON.parse(raw) : raw;
    const query = Object.fromEntries(url.searchParams);
    const authed = req.headers.authorization === `Bot ${state.token}`;
    const call: RecordedCall = {
      method,
      path,
      query,
      body,
      authed,
      status: 0,
      response: undefined,
      seq: 0,
      at: 0,
      arrived,
      ...writeTarget(method, path),
    };

    /** The per-route bucket's headers, on every answer of a limited route (as Discord sends them). */
    let routeHeaders: Record<string, string> = {};
    const send = (reply: Reply, headers: Record<string, string> = {}): void => {
      call.status = reply.status;
      call.response = reply.json;
      call.seq = state.calls.length;
      call.at = Date.now();
      state.calls.push(call);
      const payload = reply.json === undefined ? "" : JSON.stringify(reply.json);
      res.writeHead(reply.status, {
        ...(payload ? { "content-type": "application/json" } : {}),
        ...routeHeaders,
        ...headers,
      });
      res.end(payload);
      state.onCall(call);
    };

    if (authed && !path.startsWith("/interactions/")) {
      state.globalArrivals.push(arrived);
      if (overGlobal(arrived)) {
        // discord.com/developers/docs/topics/rate-limits#exceeding-a-rate-limit: a global 429.
        send(
          { status: 429, json: { message: "You are being rate limited.", retry_after: 0.5, global: true } },
          { "retry-after": "1", "x-ratelimit-global": "true", "x-ratelimit-scope": "global" },
        );
        return;
      }
    }
    const limited = state.rateLimits.find(
      (r) => r.method === method && r.path.test(path) && r.remaining > 0 && (r.when?.(body) ?? true),
    );
    if (limited) {
      limited.remaining--;
      send(
        {
          status: 429,
          json: {
            message: "You are being rate limited.",
            retry_after: limited.retryAfterSec,
            global: limited.global === true,
          },
        },
        {
          ...(limited.global ? { "x-ratelimit-global": "true" } : {}),
          "retry-after": String(limited.retryAfterSec),
          "x-ratelimit-limit": "5",
          "x-ratelimit-remaining": "0",
          "x-ratelimit-reset-after": String(limited.retryAfterSec),
          "x-ratelimit-bucket": "fake-bucket",
          "x-ratelimit-scope": limited.global ? "global" : "user",
        },
      );
      return;
    }
    const route = authed ? state.routeLimits?.take(method, path, arrived) : undefined;
    if (route) routeHeaders = route.headers;
    if (route?.retryAfterMs !== undefined) {
      const retryAfter = route.retryAfterMs / 1000;
      send({
        status: 429,
        json: { message: "You are being rate limited.", retry_after: retryAfter, global: false },
      });
      return;
    }

    const interactionRoute = /^\/(interactions|webhooks)\//.test(path);
    if (!interactionRoute && !authed) {
      send({ status: 401, json: { message: "401: Unauthorized", code: 0 } });
      return;
    }
    const editsOriginal =
      method === "PATCH" ? path.match(/^\/webhooks\/\d+\/([^/]+)\/messages\/@original$/) : null;
    if (form?.files.length && editsOriginal) {
      // Edit Original Interaction Response takes files[n] too (discord.com/developers/docs/
      // interactions/receiving-and-responding#edit-original-interaction-response).
      const { channelId, msg } = original(editsOriginal[1]!);
      if (!msg) {
        send(notFound("Message"));
        return;
      }
      const edited = editMessage(channelId, msg.id, form.body as Record<string, unknown>);
      const files = attach(channelId, form);
      msg.attachments = files;
      recordUploads(channelId, msg.id, files);
      send(edited);
      return;
    }
    if (form?.files.length) {
      // A message create with files: in a channel (bot token) or as an interaction follow-up.
      const direct = method === "POST" ? path.match(/^\/channels\/(\d+)\/messages$/) : null;
      const hook = method === "POST" ? path.match(/^\/webhooks\/\d+\/([^/]+)$/) : null;
      const channelId = direct ? direct[1]! : hook ? state.interactionChannels.get(hook[1]!) : undefined;
      if (!direct && !hook) {
        send({
          status: 400,
          json: { message: `fake Discord takes files only on message create`, code: 50035 },
        });
        return;
      }
      if (state.refuseUploads) {
        // discord.com/developers/docs/topics/opcodes-and-status-codes#json (40005).
        send({ status: 413, json: { message: "Request entity too large", code: 40005 } });
        return;
      }
      if (!channelId || !state.channels.has(channelId)) {
        send(notFound(hook ? "Webhook" : "Channel"));
        return;
      }
      const msg = createMessage(channelId, body as Record<string, unknown>, !!hook, attach(channelId, form));
      if (hook) msg.interaction_token = hook[1];
      send(ok(msg));
      return;
    }
    for (const [m, re, handler] of routes) {
      if (m !== method) continue;
      const match = path.match(re);
      if (match) {
        send(handler(match, (body ?? {}) as Record<string, unknown>, query));
        return;
      }
    }
    send({ status: 404, json: { message: `fake Discord has no route ${method} ${path}`, code: 0 } });
  }

  /**
   * The form's `files[n]` as the message's Attachment objects, named as `payload_json.attachments`
   * says (`id` = n), hosted on the CDN with a signed URL like any attachment, and recorded.
   */
  const attach = (channelId: string, form: Form): Array<Record<string, unknown>> => {
    const declared = ((form.body as { attachments?: Array<{ id: number | string; filename?: string }> })
      .attachments ?? []) as Array<{ id: number | string; filename?: string }>;
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return form.files.map((f) => {
      const named = declared.find((a) => String(a.id) === String(f.index));
      const filename = named?.filename ?? f.name;
      const id = snowflake();
      const cdnPath = `/attachments/${channelId}/${id}/${filename}`;
      const ex = Math.floor(Date.now() / 1000) + 86_400;
      state.cdn.set(cdnPath, { body: f.bytes, type: f.type, hm: `sig${id}`, ex });
      const link = `${origin}${cdnPath}?ex=${ex.toString(16)}&hm=sig${id}&`;
      return { id, filename, size: f.bytes.length, url: link, proxy_url: link, content_type: f.type };
    });
  };

  return {
    server,
    listen: () =>
      new Promise((resolve) => {
        server.listen(0, "127.0.0.1", () => {
          const { port } = server.address() as AddressInfo;
          resolve(`http://127.0.0.1:${port}/api`);
        });
      }),
  };
}

interface Form {
  body: unknown;
  files: Array<{ index: number; name: string; type: string; bytes: Buffer }>;
}

/** A multipart body as Discord reads it: the JSON in `payload_json`, the files in `files[n]`. */
async function readForm(raw: Buffer, type: string): Promise<Form> {
  const form = await new Request("http://form", {
    method: "POST",
    headers: { "content-type": type },
    body: raw,
  }).formData();
  const json = form.get("payload_json");
  const files: Form["files"] = [];
  for (const [key, value] of form.entries()) {
    const index = /^files\[(\d+)\]$/.exec(key)?.[1];
    if (index === undefined || typeof value === "string") continue;
    files.push({
      index: Number(index),
      name: value.name,
      type: value.type || "application/octet-stream",
      bytes: Buffer.from(await value.arrayBuffer()),
    });
  }
  return { body: typeof json === "string" ? JSON.parse(json) : {}, files };
}
