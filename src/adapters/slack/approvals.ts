/**
 * Spend approvals on Slack: a Block Kit message in the thread with the whole plan (every action
 * with all its arguments, the totals per recipient, the plan hash) and Approve / Reject buttons
 * whose value is the approval id and nothing else. A plan that does not fit Slack's limits whole
 * (50 blocks, 3,000 characters per section) is refused (`fits`), never cut. After a decision,
 * expiry or cancellation the message is re-rendered without buttons, saying who decided and when,
 * and later the outcome with its transaction ids.
 */
import { actionArguments, packLines, recipientTotals } from "../../core/approvals/plan-view.js";
import type { ApprovalChannel, ApprovalRecord, FitCheck, PlannedAction } from "../../core/approvals/types.js";
import { parseUserKey } from "../../core/keys.js";
import { escapeMrkdwn } from "./mrkdwn.js";
import type { SlackOutbound } from "./outbound.js";

export const APPROVE_ACTION = "neo_approve";
export const REJECT_ACTION = "neo_reject";
export const APPROVAL_BLOCK = "neo_approval";

/** Slack's limits on one message (Block Kit reference: blocks, section text). */
export const SLACK_MAX_BLOCKS = 50;
export const SLACK_SECTION_MAX = 3000;
/** Transactions listed in the outcome block; the full list goes to the model and the answer. */
const OUTCOME_TX_SHOWN = 20;

type Block = Record<string, unknown>;

function slackDate(ms: number): string {
  const sec = Math.floor(ms / 1000);
  return `<!date^${sec}^{date_short_pretty} {time_secs}|${new Date(ms).toISOString()}>`;
}

function userRef(userKey: string): string {
  return `<@${parseUserKey(userKey).user}>`;
}

const code = (s: string) => `\`${escapeMrkdwn(s)}\``;

function actionLine(a: PlannedAction, i: number): string {
  const spend = a.spend
    ? `${escapeMrkdwn(a.spend.amount)} ${escapeMrkdwn(a.spend.asset)}${a.spend.recipient ? ` → ${code(a.spend.recipient)}` : ""}`
    : "no spend read";
  return `*${i + 1}.* ${code(a.tool)} (${spend})\n${code(actionArguments(a))}`;
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
      return `:no_entry_sign: Closed${r.decidedBy ? ` by ${by}` : ""}${r.note ? `: ${escapeMrkdwn(r.note)}` : ""}. Nothing was run.`;
    case "interrupted":
      // The note says whether anything ran; the clicker stays named.
      return `:warning: ${r.decidedBy ? `Approved by ${by} ${at}, then interrupted` : "Interrupted"}: ${escapeMrkdwn(r.note ?? "Neo restarted")}.`;
  }
}

function outcomeBlocks(r: ApprovalRecord): Block[] {
  const o = r.outcome;
  if (!o) return [];
  const shown = o.txIds.slice(0, OUTCOME_TX_SHOWN).map(code);
  const more = o.txIds.length - shown.length;
  const txs = shown.length ? `${shown.join(", ")}${more > 0 ? ` and ${more} more` : ""}` : "none";
  const failed = o.results.filter((x) => x.isError).map((x) => code(x.tool));
  const lines = [
    `*Outcome:* ${o.status}`,
    `*Transactions:* ${txs}`,
    ...(failed.length ? [`*Failed:* ${failed.join(", ")}`] : []),
    ...(o.notRun.length ? [`*Not run:* ${o.notRun.length} action(s)`] : []),
  ];
  return [{ type: "section", text: { type: "mrkdwn", text: lines.join("\n") } }];
}

const section = (text: string): Block => ({ type: "section", text: { type: "mrkdwn", text } });

/** The plan's own blocks (header, totals, actions), or which line cannot be shown whole. */
function planBlocks(r: ApprovalRecord): { ok: true; blocks: Block[] } | { ok: false; reason: string } {
  const n = r.plan.actions.length;
  const header = [
    `*Approval needed:* ${n} action${n === 1 ? "" : "s"} for ${escapeMrkdwn(r.requester.displayName)}`,
    `*Intent:* ${escapeMrkdwn(r.plan.intent)}`,
  ];
  const totals = recipientTotals(r.plan).map(
    (t) => `• ${code(t.recipient)}: ${escapeMrkdwn(t.amount)} ${escapeMrkdwn(t.asset)}`,
  );
  const parts: Array<[string, string[]]> = [
    ["the header", header],
    ["the totals per recipient", totals.length ? ["*Totals per recipient:*", ...totals] : []],
    ["action", r.plan.actions.map(actionLine)],
  ];
  const blocks: Block[] = [];
  for (const [what, lines] of parts) {
    const packed = packLines(lines, SLACK_SECTION_MAX);
    if (!packed.ok) {
      const which = what === "action" ? `action ${packed.line + 1}` : what;
      return {
        ok: false,
        reason: `${which} needs ${packed.length} characters, more than a Slack section holds (${SLACK_SECTION_MAX})`,
      };
    }
    blocks.push(...packed.chunks.map(section));
  }
  return { ok: true, blocks };
}

function hashLine(r: ApprovalRecord): Block {
  return {
    type: "context",
    elements: [{ type: "mrkdwn", text: `Plan ${code(r.planHash)} · approval ${code(r.id)}` }],
  };
}

/** Blocks besides the plan's: status, hash, then the outcome (once executed) or the buttons (while pending). */
const FRAME_BLOCKS = 4;

/** Whether the record can be shown whole on Slack in every state it can reach. */
export function fitsSlack(r: ApprovalRecord): FitCheck {
  const plan = planBlocks(r);
  if (!plan.ok) return { ok: false, reason: `it cannot be shown in full on Slack: ${plan.reason}` };
  const total = plan.blocks.length + FRAME_BLOCKS;
  if (total > SLACK_MAX_BLOCKS) {
    return {
      ok: false,
      reason: `it cannot be shown in full on Slack: it needs ${total} blocks, more than the ${SLACK_MAX_BLOCKS} a message holds`,
    };
  }
  return { ok: true };
}

/** The whole message for a record in its current state; buttons only while pending. */
export function renderApproval(r: ApprovalRecord): { text: string; blocks: Block[] } {
  const plan = planBlocks(r);
  // `fits` refused such plans before they were offered; a record that got here anyway is not cut.
  if (!plan.ok) throw new Error(`approval ${r.id} cannot be shown in full: ${plan.reason}`);
  const blocks: Block[] = [
    ...plan.blocks,
    { type: "context", elements: [{ type: "mrkdwn", text: statusLine(r) }] },
    hashLine(r),
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
  const n = r.plan.actions.length;
  return { text: `Approval: ${n} action${n === 1 ? "" : "s"} (${r.status})`, blocks };
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
    fits: fitsSlack,
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
