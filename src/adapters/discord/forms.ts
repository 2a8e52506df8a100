/**
 * Discord's FormChannel: an MCP server's question goes privately to the requester (a DM from a
 * mention turn, where Discord has no ephemeral messages; an ephemeral follow-up in a `/neo ask`
 * turn) with Answer / Decline / Skip buttons. Answer opens a Discord modal of text inputs built
 * from the schema (defaults prefilled); the modal submit is read by `readAnswers`, so bad input is
 * told to the requester and the question stays open. A modal holds at most 5 inputs
 * (discord.com/developers/docs/interactions/receiving-and-responding#interaction-response-object-modal):
 * the fields beyond are named in the message and take their defaults.
 * Pending questions live in this process, as the tool call waiting for them does.
 */
import {
  type APIActionRowComponent,
  type APIButtonComponent,
  type APIModalInteractionResponseCallbackData,
  ButtonStyle,
  ComponentType,
  type REST,
  Routes,
  TextInputStyle,
} from "discord.js";
import { z } from "zod";
import { parseUserKey } from "../../core/keys.js";
import type {
  FormAnswer,
  FormChannel,
  FormField,
  FormQuestion,
  PrivateNote,
} from "../../core/tools/elicitation.js";
import { awaitAnswer, defaultText } from "../../core/tools/elicitation.js";

const PREFIX = "neo:form:";
export const MODAL_MAX_INPUTS = 5;
const TITLE_MAX = 45;
const LABEL_MAX = 45;
const PLACEHOLDER_MAX = 100;

export type FormStep = "open" | "decline" | "cancel" | "submit";

interface Pending {
  /** The requester's Discord user id. */
  user: string;
  question: FormQuestion;
  fields: FormField[];
  settle: (answer: FormAnswer) => void;
}

/** Questions waiting for their requester, by form id (in every custom_id). */
export const pendingForms = new Map<string, Pending>();

export function parseFormCustomId(customId: string): { step: FormStep; id: string } | undefined {
  const m = /^neo:form:(open|decline|cancel|submit):([0-9a-f-]{36})$/.exec(customId);
  return m ? { step: m[1] as FormStep, id: m[2]! } : undefined;
}

const customId = (step: FormStep, id: string) => `${PREFIX}${step}:${id}`;

/** The private message: the question, what a modal cannot hold, and the buttons. */
export interface FormBody {
  content: string;
  components: APIActionRowComponent<APIButtonComponent>[];
}

export function formMessage(id: string, q: FormQuestion): FormBody {
  const lines = [`**Server "${q.server}" asks:** ${q.message}`.slice(0, 1800)];
  if (q.mode === "form" && q.fields.length > MODAL_MAX_INPUTS) {
    const left = q.fields.slice(MODAL_MAX_INPUTS).map((f) => f.label);
    lines.push(
      `A Discord form holds ${MODAL_MAX_INPUTS} fields, so ${left.map((l) => `"${l}"`).join(", ")} ` +
        "cannot be asked here: their defaults are used (a required one without a default cannot be answered; Decline instead).",
    );
  }
  const button = (
    label: string,
    step: FormStep,
    style: ButtonStyle.Primary | ButtonStyle.Secondary | ButtonStyle.Success | ButtonStyle.Danger,
  ): APIButtonComponent => ({ type: ComponentType.Button, style, label, custom_id: customId(step, id) });
  const first: APIButtonComponent[] =
    q.mode === "url"
      ? [
          { type: ComponentType.Button, style: ButtonStyle.Link, label: "Open the link", url: q.url },
          button("Done", "submit", ButtonStyle.Success),
        ]
      : [button("Answer…", "open", ButtonStyle.Primary)];
  return {
    content: lines.join("\n"),
    components: [
      {
        type: ComponentType.ActionRow,
        components: [
          ...first,
          button("Decline", "decline", ButtonStyle.Danger),
          button("Skip", "cancel", ButtonStyle.Secondary),
        ],
      },
    ],
  };
}

function placeholder(f: FormField): string | undefined {
  const hint =
    f.type === "boolean"
      ? "yes or no"
      : f.options
        ? `${f.multiple ? "some of" : "one of"}: ${f.options.map((o) => o.value).join(", ")}`
        : f.type === "integer"
          ? "a whole number"
          : f.type === "number"
            ? "a number"
            : f.description;
  return hint ? hint.slice(0, PLACEHOLDER_MAX) : undefined;
}

function initial(f: FormField): string {
  if (typeof f.default === "boolean") return f.default ? "yes" : "no";
  return defaultText(f);
}

/** The modal (interaction callback type 9): one short text input per field, up to 5. */
export function formModal(
  id: string,
  q: Extract<FormQuestion, { mode: "form" }>,
): APIModalInteractionResponseCallbackData {
  return {
    title: `Server "${q.server}" asks`.slice(0, TITLE_MAX),
    custom_id: customId("submit", id),
    components: q.fields.slice(0, MODAL_MAX_INPUTS).map((f) => {
      const value = initial(f);
      const hint = placeholder(f);
      return {
        type: ComponentType.ActionRow,
        components: [
          {
            type: ComponentType.TextInput,
            style: TextInputStyle.Short,
            custom_id: f.name.slice(0, 100),
            label: f.label.slice(0, LABEL_MAX),
            // Discord requires a value in a required input; a default already answers it.
            required: f.required && f.default === undefined,
            ...(value ? { value: value.slice(0, 4000) } : {}),
            ...(hint ? { placeholder: hint } : {}),
          },
        ],
      };
    }),
  };
}

/** Sends the private message; `formMessage` gives its body. */
export type FormPoster = (user: string, body: FormBody) => Promise<void>;

/** https://discord.com/developers/docs/resources/user#create-dm (only the id is used). */
const DmChannel = z.object({ id: z.string() });

/** The question as a DM to the requester: only they see it. */
export function dmPoster(rest: REST): FormPoster {
  return async (user, body) => {
    const dm = DmChannel.parse(await rest.post(Routes.userChannels(), { body: { recipient_id: user } }));
    await rest.post(Routes.channelMessages(dm.id), { body: { ...body, allowed_mentions: { parse: [] } } });
  };
}

/** A private note: the message and a link button when it has a link, nothing to answer. */
export function noteMessage(note: PrivateNote): FormBody {
  return {
    content: `**${note.server}:** ${note.message}`.slice(0, 1900),
    components: note.url
      ? [
          {
            type: ComponentType.ActionRow,
            components: [
              { type: ComponentType.Button, style: ButtonStyle.Link, label: "Open the link", url: note.url },
            ],
          },
        ]
      : [],
  };
}

export function createDiscordFormChannel(post: FormPoster): FormChannel {
  return {
    tell: (note, requester) => post(parseUserKey(requester.userKey).user, noteMessage(note)),
    ask(question, requester, signal) {
      const user = parseUserKey(requester.userKey).user;
      const fields = question.mode === "form" ? question.fields : [];
      return awaitAnswer(
        pendingForms,
        (settle) => ({ user, question, fields, settle }),
        signal,
        (id) => post(user, formMessage(id, question)),
      );
    },
  };
}
