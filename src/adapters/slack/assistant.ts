/**
 * Slack's assistant surface ("Agents & AI apps"), through Bolt's `Assistant` middleware:
 * - a thread started in the assistant panel is greeted, with suggested prompts (configurable);
 * - a message in it takes the same inbound path as any DM thread reply (`TakeInbound`: the DM's
 *   conversation, answered in the thread), with the channel the user
 *   has open beside the panel; its Status shows as the thread's own status (`status.ts`), set as soon
 *   as the question is taken and cleared when the answer lands; the thread is titled after its first
 *   request;
 * - the context-changed event updates the channel the user is looking at, kept per thread.
 * Messages outside assistant threads (channels, plain DMs) never reach this middleware.
 */
import { Assistant } from "@slack/bolt";
import { z } from "zod";
import { type ConversationKey, conversationKey, hashTag } from "../../core/keys.js";
import { log } from "../../core/log.js";
import type { Reporter } from "../../core/reporter.js";
import type { Store } from "../../store/types.js";
import type { AssistantThreads } from "./assistant-threads.js";
import type { TakeInbound } from "./inbound-listener.js";
import type { AssistantPrompt } from "./outbound/assistant-calls.js";
import type { SlackWorkspaces } from "./workspaces.js";

export interface AssistantSettings {
  /** Said when a thread starts. */
  greeting: string;
  /** Offered under the greeting (Slack shows at most four). */
  prompts: AssistantPrompt[];
}

export interface AssistantDeps {
  store: Store;
  workspaces: SlackWorkspaces;
  settings: AssistantSettings;
  take: TakeInbound;
  /** The reporter answering `conversation` in `threadTs` (assistant Status once the thread is known). */
  reporter: (conversation: ConversationKey, threadTs: string) => Reporter;
  /** Assistant threads seen by this process: their Status is the thread's. */
  threads: AssistantThreads;
}

/** Shown while Neo works on a question, until the core says more (a tool being run). */
export const THINKING = "is thinking…";
/** A thread's title is its first request, on one line, at most this long. */
const TITLE_MAX = 60;
/** How long a thread's state (the channel in view, whether it is titled) is kept. */
const THREAD_TTL_MS = 30 * 24 * 60 * 60 * 1000;

// https://docs.slack.dev/reference/events/assistant_thread_started (and _context_changed): the same shape.
const threadEventSchema = z.object({
  assistant_thread: z.object({
    user_id: z.string(),
    channel_id: z.string().min(1),
    thread_ts: z.string().min(1),
    context: z.object({ channel_id: z.string().optional(), team_id: z.string().optional() }).optional(),
  }),
});
const envelopeSchema = z.object({ team_id: z.string().min(1) });
const messageSchema = z.object({ channel: z.string().min(1), thread_ts: z.string().min(1) });

interface ThreadState {
  /** The channel the user has open beside the panel. */
  viewing?: string;
  titled?: boolean;
}

const stateKey = (team: string, channel: string, threadTs: string) =>
  `slack:assistant:${hashTag(conversationKey({ platform: "slack", workspace: team, channel, thread: threadTs }))}`;

function titleOf(text: string): string {
  const one = text
    .replace(/<[^>]*>/g, "")
    .replace(/\s+/g, " ")
    .trim();
  return one.length > TITLE_MAX ? `${one.slice(0, TITLE_MAX - 1)}…` : one || "New question";
}

export function registerAssistant(app: { assistant(a: Assistant): unknown }, deps: AssistantDeps): void {
  const { store, workspaces, settings } = deps;

  const remember = async (team: string, channel: string, threadTs: string, change: ThreadState) => {
    const key = stateKey(team, channel, threadTs);
    const was = (await store.get<ThreadState>(key)) ?? {};
    await store.set<ThreadState>(key, { ...was, ...change }, THREAD_TTL_MS);
  };

  const known = (team: string, channel: string, threadTs: string): void => {
    deps.threads.seen(team, channel, threadTs);
  };

  const viewed = (event: unknown) => {
    const e = threadEventSchema.parse(event).assistant_thread;
    return { channel: e.channel_id, threadTs: e.thread_ts, viewing: e.context?.channel_id };
  };

  app.assistant(
    new Assistant({
      threadStarted: async ({ event, body }) => {
        const team = envelopeSchema.parse(body).team_id;
        const t = viewed(event);
        known(team, t.channel, t.threadTs);
        await remember(team, t.channel, t.threadTs, t.viewing ? { viewing: t.viewing } : {});
        const out = workspaces.out(team);
        await out.post({ channel: t.channel, thread_ts: t.threadTs, text: settings.greeting });
        if (settings.prompts.length) await out.assistantPrompts(t.channel, t.threadTs, settings.prompts);
      },
      threadContextChanged: async ({ event, body }) => {
        const team = envelopeSchema.parse(body).team_id;
        const t = viewed(event);
        known(team, t.channel, t.threadTs);
        await remember(team, t.channel, t.threadTs, t.viewing ? { viewing: t.viewing } : {});
      },
      userMessage: async ({ event, body }) => {
        const team = envelopeSchema.parse(body).team_id;
        const m = messageSchema.parse(event);
        const state = (await store.get<ThreadState>(stateKey(team, m.channel, m.thread_ts))) ?? {};
        const viewing = state.viewing
          ? `#${
              (await workspaces
                .channels(team)
                .name(state.viewing)
                .catch(() => undefined)) ?? state.viewing
            }`
          : undefined;
        const text =
          typeof (event as { text?: unknown }).text === "string" ? (event as { text: string }).text : "";
        await deps.take(body, {
          ...(viewing ? { viewing } : {}),
          beforeSubmit: async (conversation) => {
            known(team, m.channel, m.thread_ts);
            await deps.reporter(conversation, m.thread_ts).status(THINKING);
            if (state.titled) return;
            // The title is a nicety: a failure is logged, the question still goes through.
            await workspaces
              .out(team)
              .assistantTitle(m.channel, m.thread_ts, titleOf(text))
              .then(() => remember(team, m.channel, m.thread_ts, { titled: true }))
              .catch((err: unknown) => log.warn({ err, channel: m.channel }, "slack: thread title not set"));
          },
        });
      },
    }),
  );
}
