/**
 * Inbound messages: middleware decides (dedupe by event_id, ignore with a reason, authorise), the
 * listener enriches (speaker name, earlier thread messages) and submits to the conversation layer.
 * Bolt runs with `processBeforeResponse`, so Slack's 200 goes out only after `submit` has journaled
 * the message; a failure answers 500 and Slack's retry delivers it again.
 */
import type { AllMiddlewareArgs, App } from "@slack/bolt";
import type { AccessPolicy } from "../../core/access/policy.js";
import { type ChannelSettingsStore, channelGate } from "../../core/channels/index.js";
import { boundEarlier, comparePositions, EARLIER_MESSAGES } from "../../core/conversations/index.js";
import { countIgnored, recordInbound } from "../../core/conversations/observe.js";
import type {
  ConversationIO,
  Conversations,
  InboundMessage,
  ThreadReach,
} from "../../core/conversations/types.js";
import { type ConversationKey, channelKey, userKey } from "../../core/keys.js";
import { log } from "../../core/log.js";
import type { Store } from "../../store/types.js";
import type { SlackEvents } from "./event-router.js";
import { decideInbound, type InboundDecision, type InboundPolicy, SLACKBOT_USER } from "./inbound.js";
import type { ReplyMessage } from "./outbound/lookups.js";
import { namesIn, renderSlackContent } from "./readable.js";
import type { SlackIdentity, SlackWorkspaces } from "./workspaces.js";

/**
 * How long an event_id claim holds. It only keeps two deliveries of one event from running at once;
 * the durable dedupe is the journal's, by message id. Short, so a claim whose release failed (store
 * down) cannot swallow Slack's retries (about 1 and 5 minutes later).
 */
export const EVENT_CLAIM_MS = 30_000;

export interface InboundDeps {
  store: Store;
  access: Pick<AccessPolicy, "isAllowed">;
  conversations: Pick<Conversations, "submit" | "threadReach">;
  /** The workspace each event came from: its identity, token and calls. */
  workspaces: SlackWorkspaces;
  /** Bots answered like people (`NEO_ANSWER_BOTS`). */
  policy: InboundPolicy;
  /** Per-channel settings: the gate decides whether a channel message is answered. */
  channels: Pick<ChannelSettingsStore, "get">;
  /** The conversation's IO, answering in thread `threadTs` (a DM thread reply). */
  threadIo: (conversation: ConversationKey, threadTs: string) => ConversationIO;
}

type Message = Extract<InboundDecision, { kind: "message" }>;

const slog = log.child({ component: "slack" });

/** An inbound event could not be taken; the receiver answers 500 and Slack retries it. */
export class SlackInboundError extends Error {
  readonly code = "SLACK_INBOUND_NOT_TAKEN";
}

function envelopeOf(body: unknown): { eventId?: string; teamId?: string; event?: unknown } {
  if (typeof body !== "object" || body === null) return {};
  const b = body as { type?: unknown; event_id?: unknown; team_id?: unknown; event?: unknown };
  if (b.type !== "event_callback") return {};
  return {
    eventId: typeof b.event_id === "string" ? b.event_id : undefined,
    teamId: typeof b.team_id === "string" ? b.team_id : undefined,
    event: b.event,
  };
}

const NO_REACH: ThreadReach = {};

const eventClaimKey = (eventId: string) => `slack:event:${eventId}`;

/** Events `take` decides (the listener's own): a message, a mention. */
function isMessageEvent(event: unknown): boolean {
  const type = (event as { type?: unknown } | undefined)?.type;
  return type === "message" || type === "app_mention";
}

/** A thread message a person wrote (not Neo, not a bot, not a system notice). */
const byPerson = (m: ReplyMessage, me: SlackIdentity): boolean =>
  Boolean(m.user && m.user !== me.botUserId && m.user !== SLACKBOT_USER && !m.bot_id && !m.subtype);

/** Earlier thread messages brought in; `read` = the thread was read up to the message. */
interface Earlier {
  lines?: string[];
  read: boolean;
}

/**
 * Earlier thread messages the transcript does not hold yet, "Name: text", oldest first. The first
 * time Neo is addressed in a thread (nothing journaled there: `seen` undefined) that is the thread
 * so far, bounded, newest kept. After that, follow-ups arrive as events of their own, so only a
 * mention looks back, and only past `seen` (what an app without the message events missed).
 */
async function contextFor(
  d: Message,
  me: SlackIdentity,
  deps: InboundDeps,
  seen: string | undefined,
): Promise<Earlier> {
  if (!d.inThread || !d.threadTs) return { read: false };
  if (seen !== undefined && (!d.mentioned || comparePositions(seen, d.ts) >= 0)) return { read: false };
  const replies = await deps.workspaces.out(me.teamId).replies(d.channel, d.threadTs, seen);
  const unseen = replies
    .filter(
      (m) =>
        comparePositions(m.ts, d.ts) < 0 &&
        (seen === undefined || comparePositions(m.ts, seen) > 0) &&
        byPerson(m, me) &&
        (m.text || m.files?.length || m.attachments?.length),
    )
    .sort((a, b) => comparePositions(a.ts, b.ts))
    .slice(-EARLIER_MESSAGES);
  const lines: string[] = [];
  const names = namesIn(deps.workspaces, me.teamId);
  for (const m of unseen) {
    const who = (await names.user(m.user!).catch(() => "")) || m.user!;
    lines.push(`${who}: ${await renderSlackContent(m, names, me.botUserId)}`);
  }
  const kept = boundEarlier(lines);
  return kept.length ? { lines: kept, read: true } : { read: true };
}

/** The speaker's name as Neo knows it; the id while it does not (a failed read is logged, not fatal). */
function speakerName(user: string, me: SlackIdentity, deps: InboundDeps): Promise<string> {
  return deps.workspaces
    .users(me.teamId)
    .name(user)
    .then((name) => name ?? user)
    .catch((err: unknown) => {
      slog.warn({ err, user }, "speaker's name not read; speaking name is the user id");
      return user;
    });
}

/** More a caller knows about a message than its event says (the assistant panel, `assistant.ts`). */
export interface InboundExtra {
  /** The channel the user has open beside the assistant thread ("#general"). */
  viewing?: string;
  /** The message will be submitted (it passed every check): runs just before. */
  beforeSubmit?: (conversation: string) => Promise<void>;
}

/** Takes one event envelope: decides, enriches and submits it (throws when it was not taken). */
export type TakeInbound = (body: unknown, extra?: InboundExtra) => Promise<void>;

export function registerInbound(app: App, events: SlackEvents, deps: InboundDeps): TakeInbound {
  // Retried deliveries of an event in flight are dropped here. Not messages: the journal takes each
  // message once (by its id, atomically, on every instance), and a claim would outlive a delivery
  // cut by a crash, so that Slack's retry was answered 200 as a "duplicate" and the message lost.
  app.use(async ({ body, next }: AllMiddlewareArgs & { body: unknown }) => {
    const { eventId, event } = envelopeOf(body);
    if (!eventId || isMessageEvent(event)) return next();
    const key = eventClaimKey(eventId);
    if (!(await deps.store.setIfAbsent(key, 1, EVENT_CLAIM_MS))) {
      recordInbound({ platform: "slack", id: eventId, conversation: null, disposition: "duplicate" });
      return;
    }
    try {
      await next();
    } catch (err) {
      // Not taken: forget the claim so Slack's retry is processed.
      await deps.store.delete(key);
      throw err;
    }
  });

  /**
   * One thread's events are taken one after another on this instance: each reads how far the
   * transcript reaches only after the one before was journaled, so a message is never both read
   * as another's context and journaled itself.
   */
  const threads = new Map<string, Promise<void>>();
  const inOrder = (conversation: string, job: () => Promise<void>): Promise<void> => {
    const run = (threads.get(conversation) ?? Promise.resolve()).then(job);
    const tail = run.catch(() => {});
    threads.set(conversation, tail);
    void tail.then(() => {
      if (threads.get(conversation) === tail) threads.delete(conversation);
    });
    return run;
  };

  const take: TakeInbound = async (body, extra = {}) => {
    const { eventId, teamId, event } = envelopeOf(body);
    const me = teamId ? await deps.workspaces.identity(teamId) : undefined;
    if (!me) {
      countIgnored("slack");
      slog.debug({ eventId, team: teamId }, "ignored: Neo is not installed in this workspace");
      return;
    }
    const d = decideInbound(event, me, deps.policy);
    if (d.kind === "ignore") {
      countIgnored("slack");
      slog.debug({ eventId, reason: d.reason }, `ignored: ${d.reason}`);
      return;
    }
    await inOrder(d.conversation, () => takeMessage(d, me, eventId, extra));
  };

  const takeMessage = async (
    d: Message,
    me: SlackIdentity,
    eventId: string | undefined,
    extra: InboundExtra,
  ): Promise<void> => {
    const speakerKey = userKey({ platform: "slack", workspace: me.teamId, user: d.user });
    // One round trip reads everything that decides whether the message is taken, and beside it what
    // Neo knows of the speaker, the place and the names in the text (store reads, never a lookup:
    // what is not known yet is asked of Slack in the background, for the next message). How far the
    // transcript reaches into this thread (anything there means Neo answers in it) is not needed
    // for a top-level channel message: it opens its own thread.
    const [reach, settings, allowed, who, place, text] = await Promise.all([
      d.shared && !d.inThread ? NO_REACH : deps.conversations.threadReach(d.conversation),
      d.shared
        ? deps.channels.get(channelKey({ platform: "slack", workspace: me.teamId, channel: d.channel }))
        : undefined,
      deps.access.isAllowed(speakerKey),
      d.authorName ?? speakerName(d.user, me, deps),
      deps.workspaces.channels(me.teamId).place(d.channel, d.channelType),
      renderSlackContent(d.content, namesIn(deps.workspaces, me.teamId), me.botUserId),
    ]);
    const seen = reach.seen;
    if (reach.covered !== undefined && comparePositions(d.ts, reach.covered) < 0) {
      // A later message read the thread past this one (it came late): it is in the transcript.
      countIgnored("slack");
      slog.debug({ eventId, id: d.id }, "ignored: already in the transcript (read as thread context)");
      return;
    }
    if (settings) {
      const followUp = seen !== undefined;
      const verdict = channelGate(settings, { dm: false, mentioned: d.mentioned, followUp });
      if (!verdict.answer) {
        countIgnored("slack");
        slog.debug({ eventId, reason: verdict.reason }, `ignored: ${verdict.reason}`);
        return;
      }
    }
    if (!allowed) {
      countIgnored("slack");
      slog.debug({ eventId, user: speakerKey }, "ignored: user is not allowed to use Neo");
      return;
    }
    // Earlier thread messages enrich the message; failing to get them must not lose it (logged).
    const earlier = await contextFor(d, me, deps, seen).catch((err: unknown) => {
      slog.warn(
        { err, channel: d.channel },
        "conversations.replies failed; no thread context for this message",
      );
      const none: Earlier = { read: false };
      return none;
    });
    const msg: InboundMessage = {
      id: d.id,
      conversation: d.conversation,
      speaker: { userKey: speakerKey, displayName: who },
      text,
      ...(d.files.length ? { files: d.files } : {}),
      shared: d.shared,
      place,
      ...(earlier.lines ? { context: earlier.lines } : {}),
      position: d.ts,
      ...(earlier.read ? { through: d.ts } : {}),
      ...(extra.viewing ? { viewing: extra.viewing } : {}),
      receivedAt: Date.now(),
    };
    // A DM thread reply continues the DM's conversation but is answered in its thread.
    const answerIn = !d.shared && d.threadTs ? deps.threadIo(d.conversation, d.threadTs) : undefined;
    await extra.beforeSubmit?.(d.conversation);
    const res = await deps.conversations.submit(msg, answerIn);
    // Slack's 200 goes out after the turn this message started has handed its model request to the
    // HTTP client (the pass runs on the same journal answer, in the microtasks before this
    // immediate): the ack can wait a moment, the answer's path should not wait for it. undici writes
    // a request on a kept-alive socket in this same immediates phase, after it (GHSA-35p6-xmwp-9g52);
    // a second immediate moved that ~0.35 ms to the reply's side with no gain (BENCHMARKS.md, Overhead).
    await new Promise((resolve) => setImmediate(resolve));
    // Accepted and duplicate are counted and logged by the conversations layer.
    if (!res.accepted && res.reason === "shutting_down") {
      // Not journaled: answer 500 so Slack delivers it again (to another instance, or after restart).
      throw new SlackInboundError(`not accepted while shutting down: ${d.id}`);
    }
  };
  const handle = ({ body }: AllMiddlewareArgs & { body: unknown }) => take(body);
  events.on("app_mention", handle);
  events.on("message", handle);
  return take;
}
