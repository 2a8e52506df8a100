/**
 * An approval as a Discord message: an embed with the plan (each action, its spend and recipient),
 * Approve / Reject buttons while pending, then who decided and when, then the outcome. Pure.
 */
import type { ApprovalRecord, ApprovalStatus, Decision } from "../../core/approvals/types.js";
import { parseUserKey } from "../../core/keys.js";

const PREFIX = "neo:apv:";
/** Discord's limit on a button's custom_id. */
export const CUSTOM_ID_MAX = 100;

export class ApprovalButtonError extends Error {
  readonly code = "DISCORD_BAD_APPROVAL_BUTTON";
}

export function approvalCustomId(decision: Decision, approvalId: string): string {
  const id = `${PREFIX}${decision === "approve" ? "a" : "r"}:${approvalId}`;
  if (id.length > CUSTOM_ID_MAX)
    throw new ApprovalButtonError(`approval id too long for a button: ${approvalId}`);
  return id;
}

/** The decision and approval id a button carries, or undefined if it is not an approval button. */
export function parseApprovalCustomId(
  customId: string,
): { decision: Decision; approvalId: string } | undefined {
  const m = customId.match(/^neo:apv:([ar]):(.{1,90})$/);
  if (!m) return undefined;
  return { decision: m[1] === "a" ? "approve" : "reject", approvalId: m[2]! };
}

const COLOR: Record<ApprovalStatus, number> = {
  pending: 0xf1c40f,
  approved: 0x2ecc71,
  rejected: 0xe74c3c,
  expired: 0x95a5a6,
  cancelled: 0x95a5a6,
};

const TITLE: Record<ApprovalStatus, string> = {
  pending: "Approval needed",
  approved: "Approved",
  rejected: "Rejected",
  expired: "Expired — nothing was done",
  cancelled: "Cancelled — nothing was done",
};

const cut = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
const ts = (ms: number, style: "R" | "f"): string => `<t:${Math.floor(ms / 1000)}:${style}>`;

function who(userKey: string): string {
  try {
    return `<@${parseUserKey(userKey).user}>`;
  } catch {
    return userKey;
  }
}

export interface DiscordMessageBody {
  embeds: unknown[];
  components: unknown[];
}

export function renderApproval(rec: ApprovalRecord): DiscordMessageBody {
  const actions = rec.plan.actions.slice(0, 20).map((a, i) => {
    const spend = a.spend
      ? `\n**Spend:** ${a.spend.amount} ${a.spend.asset}${a.spend.recipient ? ` → \`${a.spend.recipient}\`` : ""}`
      : "";
    return {
      name: cut(`${i + 1}. ${a.tool}`, 256),
      value: cut(`\`\`\`json\n${cut(JSON.stringify(a.arguments), 800)}\n\`\`\`${spend}`, 1024),
    };
  });
  const fields: Array<{ name: string; value: string; inline?: boolean }> = [
    ...actions,
    {
      name: "Requested by",
      value: `${cut(rec.requester.displayName, 80)} (${who(rec.requester.userKey)})`,
      inline: true,
    },
  ];
  if (rec.status === "pending") fields.push({ name: "Expires", value: ts(rec.expiresAt, "R"), inline: true });
  else if (rec.decidedBy) {
    fields.push({
      name: "Decided",
      value: `${who(rec.decidedBy)} ${ts(rec.decidedAt ?? Date.now(), "f")}`,
      inline: true,
    });
  } else fields.push({ name: "Closed", value: ts(rec.decidedAt ?? rec.expiresAt, "f"), inline: true });
  if (rec.outcome) {
    const tx = rec.outcome.txIds.length ? rec.outcome.txIds.map((t) => `\`${t}\``).join("\n") : "none";
    fields.push({ name: `Outcome: ${rec.outcome.status}`, value: cut(`Transactions:\n${tx}`, 1024) });
  }
  const embed = {
    title: TITLE[rec.status],
    description: cut(`${rec.plan.summary}\n\n**Intent:** ${rec.plan.intent}`, 4000),
    color: COLOR[rec.status],
    fields,
    footer: { text: cut(`approval ${rec.id}`, 2048) },
  };
  const components =
    rec.status === "pending"
      ? [
          {
            type: 1,
            components: [
              { type: 2, style: 3, label: "Approve", custom_id: approvalCustomId("approve", rec.id) },
              { type: 2, style: 4, label: "Reject", custom_id: approvalCustomId("reject", rec.id) },
            ],
          },
        ]
      : [];
  return { embeds: [embed], components };
}
