/**
 * Spend approvals on Slack: a Block Kit message in the thread with the plan (each action, its spend
 * and recipient) and Approve / Reject buttons whose value is the approval id and nothing else. After
 * a decision, expiry or cancellation the message is re-rendered without buttons, saying who decided
 * and when, and later the outcome with its transaction ids.
 */
import type { ApprovalChannel, ApprovalRecord, PlannedAction } from "../../core/approvals/types.js";
import { parseUserKey } from "../../core/keys.js";
import { escapeMrkdwn } from "./mrkdwn.js";
import type { SlackOutbound } from "./outbound.js";

export const APPROVE_ACTION = "neo_approve";
export const REJECT_ACTION = "neo_reject";
export const APPROVAL_BLOCK = "neo_approval";

type Block = Record<string, unknown>;

const ARGS_MAX = 600;

function slackDate(ms: number): string {
  const sec = Math.floor(ms / 1000);
  return `<!date^${sec}^{date_short_pretty} {time_secs}|${new Date(ms).toISOString()}>`;
}

function userRef(userKey: string): string {
  return `<@${parseUserKey(userKey).user}>`;
}

function actionBlock(a: PlannedAction, i: number): Block {
  const args = JSON.stringify(a.arguments, null, 1);
  const shown = args.length > ARGS_MAX ? `${args.slice(0, ARGS_MAX)}…` : args;
  const spend = a.spend
    ? `*Spend:* ${escapeMrkdwn(a.spend.amount)} ${escapeMrkdwn(a.spend.asset)}${
        a.spend.recipient ? ` → \`${escapeMrkdwn(a.spend.recipient)}\`` : ""
      }`
    : "*Spend:* none";
  return {
    type: "section",
    text: {
      type: "mrkdwn",
      text: `*${i + 1}. \`${escapeMrkdwn(a.tool)}\`*\n${spend}\n\`\`\`${escapeMrkdwn(shown)}\`\`\``,
    },
  };
}

function statusLine(r: ApprovalRecord): string {
  const by = r.decidedBy ? userRef(r.decidedBy) : "someone";
  const at = r.decidedAt ? slackDate(r.decidedAt) : "";
  switch (r.status) {
    case "pending":
      return `Waiting for ${escapeMrkdwn(r.requester.displayName)} to approve. Expires ${slackDate(r.expiresAt)}.`;
    case "approved":
      return `:white_check_mark: Approved by ${by} ${at}`.trim();
    case "rejected":
      return `:x: Rejected by ${by} ${at}. Nothing was run.`.replace(" .", ".");
    case "expired":
      return `:hourglass: Expired ${slackDate(r.expiresAt)}. Nothing was run.`;
    case "cancelled":
      return `:no_entry_sign: Cancelled${r.decidedBy ? ` by ${by}` : ""}. Nothing was run.`;
  }
}

function outcomeBlocks(r: ApprovalRecord): Block[] {
  const o = r.outcome;
  if (!o) return [];
  const txs = o.txIds.length ? o.txIds.map((t) => `\`${escapeMrkdwn(t)}\``).join(", ") : "none";
  const failed = o.results.filter((x) => x.isError).map((x) => `\`${escapeMrkdwn(x.tool)}\``);
  const lines = [
    `*Outcome:* ${o.status}`,
    `*Transactions:* ${txs}`,
    ...(failed.length ? [`*Failed:* ${failed.join(", ")}`] : []),
    ...(o.notRun.length ? [`*Not run:* ${o.notRun.length} action(s)`] : []),
  ];
  return [{ type: "section", text: { type: "mrkdwn", text: lines.join("\n") } }];
}

/** The whole message for a record in its current state; buttons only while pending. */
export function renderApproval(r: ApprovalRecord): { text: string; blocks: Block[] } {
  // Section text holds at most 3,000 characters; a plan summary is one line, keep it well under.
  const summary = r.plan.summary.length > 1500 ? `${r.plan.summary.slice(0, 1500)}…` : r.plan.summary;
  const header = `*Approval needed:* ${escapeMrkdwn(summary)}`;
  const blocks: Block[] = [
    { type: "section", text: { type: "mrkdwn", text: header } },
    ...r.plan.actions.slice(0, 40).map(actionBlock),
    { type: "context", elements: [{ type: "mrkdwn", text: statusLine(r) }] },
    ...outcomeBlocks(r),
  ];
  if (r.status === "pending") {
    blocks.push({
      type: "actions",
      block_id: APPROVAL_BLOCK,
      elements: [
        {
          type: "button",
          action_id: APPROVE_ACTION,
          style: "primary",
          text: { type: "plain_text", text: "Approve" },
          value: r.id,
        },
        {
          type: "button",
          action_id: REJECT_ACTION,
          style: "danger",
          text: { type: "plain_text", text: "Reject" },
          value: r.id,
        },
      ],
    });
  }
  return { text: `Approval: ${escapeMrkdwn(summary)} (${r.status})`, blocks };
}

/** `messageRef` format: `channel/ts`. */
export function messageRef(channel: string, ts: string): string {
  return `${channel}/${ts}`;
}

export function parseMessageRef(ref: string): { channel: string; ts: string } | undefined {
  const i = ref.indexOf("/");
  if (i <= 0) return undefined;
  return { channel: ref.slice(0, i), ts: ref.slice(i + 1) };
}

export function createSlackApprovalChannel(
  out: SlackOutbound,
  channel: string,
  threadTs: string,
): ApprovalChannel {
  return {
    present: async (record) => {
      const { text, blocks } = renderApproval(record);
      const ts = await out.post({ channel, thread_ts: threadTs, text, blocks });
      return ts ? messageRef(channel, ts) : undefined;
    },
    update: async (record) => {
      const ref = record.messageRef ? parseMessageRef(record.messageRef) : undefined;
      if (!ref) return;
      await out.update(ref.channel, ref.ts, () => renderApproval(record));
    },
  };
}

/** A clicked approval message with its buttons replaced by `note` (used when the record is gone or expired). */
export function withoutButtons(blocks: unknown[], note: string): Block[] {
  const kept = blocks.filter(
    (b): b is Block => typeof b === "object" && b !== null && (b as Block).type !== "actions",
  );
  return [...kept, { type: "context", elements: [{ type: "mrkdwn", text: escapeMrkdwn(note) }] }];
}
