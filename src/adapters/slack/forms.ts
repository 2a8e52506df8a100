/**
 * Slack's FormChannel: an MCP server's question as an ephemeral message to the requester only,
 * with Block Kit inputs (text inputs prefilled with the defaults, selects for enums and yes/no) and
 * Submit / Decline / Skip buttons. A click's `state.values` carries what was entered
 * (https://docs.slack.dev/reference/interaction-payloads/block_actions-payload); the listener
 * (`form-listener.ts`) checks the clicker is the requester and settles the pending question here.
 * Pending questions live in this process, as the tool call waiting for them does.
 */
import { parseUserKey } from "../../core/keys.js";
import type {
  FormAnswer,
  FormChannel,
  FormField,
  FormQuestion,
  PrivateNote,
} from "../../core/tools/elicitation.js";
import { awaitAnswer, defaultText } from "../../core/tools/elicitation.js";
import type { SlackOutbound } from "./outbound.js";

export const FORM_ACTIONS = {
  accept: "neo_form_accept",
  decline: "neo_form_decline",
  cancel: "neo_form_cancel",
};

interface Pending {
  user: string;
  fields: FormField[];
  settle: (answer: FormAnswer) => void;
}

/** Questions waiting for their requester's click, by form id (the buttons' value). */
export const pendingForms = new Map<string, Pending>();

const plain = (text: string) => ({ type: "plain_text", text: text.slice(0, 150) || " " });
const option = (value: string, label: string) => ({ text: plain(label), value });

function input(f: FormField): Record<string, unknown> {
  const choices =
    f.type === "boolean"
      ? [option("yes", "Yes"), option("no", "No")]
      : f.options?.map((o) => option(o.value, o.label));
  const initial =
    f.default === undefined
      ? undefined
      : typeof f.default === "boolean"
        ? f.default
          ? "yes"
          : "no"
        : defaultText(f);
  const element = choices
    ? {
        type: "static_select",
        action_id: f.name,
        options: choices,
        ...(initial !== undefined ? { initial_option: choices.find((c) => c.value === initial) } : {}),
      }
    : { type: "plain_text_input", action_id: f.name, ...(initial ? { initial_value: initial } : {}) };
  return {
    type: "input",
    block_id: `neo_form:${f.name}`,
    label: plain(f.label),
    optional: !f.required,
    ...(f.description ? { hint: plain(f.description) } : {}),
    element,
  };
}

export function formBlocks(id: string, q: FormQuestion): unknown[] {
  const asks = `*Server "${q.server}" asks:* ${q.message}`;
  const button = (text: string, action_id: string, style?: string) => ({
    type: "button",
    text: plain(text),
    action_id,
    value: id,
    ...(style ? { style } : {}),
  });
  return [
    { type: "section", text: { type: "mrkdwn", text: asks.slice(0, 3000) } },
    ...(q.mode === "url"
      ? [{ type: "section", text: { type: "mrkdwn", text: `<${q.url}|Open the link>` } }]
      : q.fields.map(input)),
    {
      type: "actions",
      block_id: "neo_form",
      elements: [
        button(q.mode === "url" ? "Done" : "Submit", FORM_ACTIONS.accept, "primary"),
        button("Decline", FORM_ACTIONS.decline),
        button("Skip", FORM_ACTIONS.cancel),
      ],
    },
  ];
}

/** A private note: the message and its link if any, no buttons (nothing waits for an answer). */
export function noteBlocks(note: PrivateNote): unknown[] {
  return [
    { type: "section", text: { type: "mrkdwn", text: `*${note.server}:* ${note.message}`.slice(0, 3000) } },
    ...(note.url ? [{ type: "section", text: { type: "mrkdwn", text: `<${note.url}|Open the link>` } }] : []),
  ];
}

export function createSlackFormChannel(out: SlackOutbound, channel: string, threadTs: string): FormChannel {
  return {
    async tell(note, requester) {
      await out.ephemeral({
        channel,
        user: parseUserKey(requester.userKey).user,
        text: `${note.server}: ${note.message}${note.url ? ` ${note.url}` : ""}`,
        blocks: noteBlocks(note),
        ...(threadTs ? { thread_ts: threadTs } : {}),
      });
    },
    ask(question, requester, signal) {
      const user = parseUserKey(requester.userKey).user;
      const fields = question.mode === "form" ? question.fields : [];
      return awaitAnswer(
        pendingForms,
        (settle) => ({ user, fields, settle }),
        signal,
        (id) =>
          out.ephemeral({
            channel,
            user,
            text: `Server "${question.server}" asks: ${question.message}`,
            blocks: formBlocks(id, question),
            ...(threadTs ? { thread_ts: threadTs } : {}),
          }),
      );
    },
  };
}
