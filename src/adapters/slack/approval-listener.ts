/**
 * Approve / Reject clicks. Ack first; the button carries only the approval id, the broker decides.
 * A refused click tells the clicker why (ephemeral) and changes nothing; the message of an expired
 * or already-settled approval is re-rendered from its record so stale buttons disappear.
 */
import type { App, BlockAction, ButtonAction, SlackActionMiddlewareArgs } from "@slack/bolt";
import type { ApprovalBroker } from "../../core/approvals/broker.js";
import type { Decision } from "../../core/approvals/types.js";
import { userKey } from "../../core/keys.js";
import { log } from "../../core/log.js";
import { APPROVE_ACTION, REJECT_ACTION, renderApproval, withoutButtons } from "./approvals.js";
import type { SlackWorkspaces } from "./workspaces.js";

export interface ApprovalListenerDeps {
  broker: Pick<ApprovalBroker, "decide" | "get">;
  /** The workspace each click came from. */
  workspaces: SlackWorkspaces;
}

const slog = log.child({ component: "slack" });

async function onClick(
  args: SlackActionMiddlewareArgs<BlockAction<ButtonAction>>,
  decision: Decision,
  deps: ApprovalListenerDeps,
): Promise<void> {
  const { body, action } = args;
  const approvalId = action.value ?? "";
  const teamId = body.team?.id ?? body.user.team_id ?? "";
  const out = deps.workspaces.out(teamId);
  const clicker = userKey({ platform: "slack", workspace: teamId, user: body.user.id });
  const channel = body.channel?.id ?? body.container?.channel_id;
  const ts = body.message?.ts ?? body.container?.message_ts;
  const threadTs = (body.message as { thread_ts?: string } | undefined)?.thread_ts;
  const result = await deps.broker.decide(approvalId, clicker, decision);
  if (result.ok) return; // the broker re-renders the message through the ApprovalChannel
  slog.info({ approvalId, clicker, reason: result.reason }, "approval click refused");
  if (channel) {
    await out.ephemeral({
      channel,
      user: body.user.id,
      text: result.message,
      ...(threadTs ? { thread_ts: threadTs } : {}),
    });
  }
  if (
    !channel ||
    !ts ||
    (result.reason !== "expired" && result.reason !== "already_decided" && result.reason !== "unknown")
  ) {
    return;
  }
  const record = await deps.broker.get(approvalId);
  const content = record
    ? renderApproval(record)
    : {
        text: "Approval no longer available",
        blocks: withoutButtons(
          body.message?.blocks ?? [],
          "This approval no longer exists. Nothing was run.",
        ),
      };
  await out.update(channel, ts, () => content);
}

export function registerApprovalActions(app: App, deps: ApprovalListenerDeps): void {
  const listener =
    (decision: Decision) =>
    async (args: SlackActionMiddlewareArgs<BlockAction<ButtonAction>>): Promise<void> => {
      await args.ack();
      // After the ack: the decision and its messages must not hold Slack's response.
      void onClick(args, decision, deps).catch((err: unknown) =>
        slog.error({ err, decision }, "approval click failed"),
      );
    };
  app.action<BlockAction<ButtonAction>>(APPROVE_ACTION, listener("approve"));
  app.action<BlockAction<ButtonAction>>(REJECT_ACTION, listener("reject"));
}
