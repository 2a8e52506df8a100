/**
 * Submit / Decline / Skip on a server's question (`forms.ts`). Ack first. Only the requester
 * settles it: anyone else is told so and nothing changes. A submission is read from the click's
 * `state.values` (zod-checked); a missing or mistyped field is told to the requester and the
 * question stays open.
 */
import type { App, BlockAction, ButtonAction, SlackActionMiddlewareArgs } from "@slack/bolt";
import { z } from "zod";
import { log } from "../../core/log.js";
import { readAnswers } from "../../core/tools/elicitation.js";
import { FORM_ACTIONS, pendingForms } from "./forms.js";
import type { SlackWorkspaces } from "./workspaces.js";

const slog = log.child({ component: "slack" });

/** https://docs.slack.dev/reference/interaction-payloads/block_actions-payload (`state.values`). */
const StateValues = z.record(
  z.string(),
  z.record(
    z.string(),
    z.object({
      value: z.string().nullish(),
      selected_option: z.object({ value: z.string() }).nullish(),
    }),
  ),
);

async function onClick(
  args: SlackActionMiddlewareArgs<BlockAction<ButtonAction>>,
  workspaces: SlackWorkspaces,
): Promise<void> {
  const { body, action } = args;
  const pending = pendingForms.get(action.value ?? "");
  const channel = body.channel?.id ?? body.container?.channel_id;
  const tell = async (text: string) => {
    const teamId = body.team?.id ?? body.user.team_id ?? "";
    if (channel) await workspaces.out(teamId).ephemeral({ channel, user: body.user.id, text });
  };
  if (!pending) return tell("This question is no longer open.");
  if (body.user.id !== pending.user) {
    slog.info({ clicker: body.user.id }, "form click by someone other than the requester refused");
    return tell("Only the person who asked can answer this question.");
  }
  if (action.action_id === FORM_ACTIONS.decline) return pending.settle({ action: "decline" });
  if (action.action_id === FORM_ACTIONS.cancel) return pending.settle({ action: "cancel" });
  const values = StateValues.safeParse((body as { state?: { values?: unknown } }).state?.values ?? {});
  if (!values.success) return tell("Could not read the form; please try again.");
  const raw: Record<string, string> = {};
  for (const f of pending.fields) {
    const v = values.data[`neo_form:${f.name}`]?.[f.name];
    raw[f.name] = v?.selected_option?.value ?? v?.value ?? "";
  }
  const read = readAnswers(pending.fields, raw);
  if ("error" in read) return tell(`${read.error}; the question is still open.`);
  pending.settle({ action: "accept", content: read.content });
}

export function registerFormActions(app: App, workspaces: SlackWorkspaces): void {
  const listener = async (args: SlackActionMiddlewareArgs<BlockAction<ButtonAction>>): Promise<void> => {
    await args.ack();
    void onClick(args, workspaces).catch((err: unknown) => slog.error({ err }, "form click failed"));
  };
  for (const id of Object.values(FORM_ACTIONS)) app.action<BlockAction<ButtonAction>>(id, listener);
}
