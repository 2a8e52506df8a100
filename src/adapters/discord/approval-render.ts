/**
 * An approval as a Discord message: an embed with the whole plan (every action with all its
 * arguments, the totals per recipient, the plan hash), Approve / Reject buttons while pending, then
 * who decided and when, then the outcome. A plan that does not fit Discord's embed limits whole
 * (description 4,096, field value 1,024, 25 fields, 6,000 characters in all) is refused (`fitsDiscord`),
 * never cut. Pure.
 */
import { actionArguments, packLines, recipientTotals } from "../../core/approvals/plan-view.js";
import type {
  ApprovalRecord,
  ApprovalStatus,
  Decision,
  FitCheck,
  PlannedAction,
} from "../../core/approvals/types.js";
import { parseUserKey } from "../../core/keys.js";

const PREFIX = "neo:apv:";
/** Discord's limit on a button's custom_id. */
export const CUSTOM_ID_MAX = 100;

/** Discord's embed limits (developer docs, "Embed Limits"). */
export const EMBED_LIMITS = { description: 4096, fieldValue: 1024, fields: 25, total: 6000 } as const;
/** Room kept for what later states add (decided-by, outcome): the plan must fit with it. */
const STATE_RESERVE = 700;
/** The outcome field's length; its transactions beyond it are counted, the model gets them all. */
const OUTCOME_MAX = 500;

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
  interrupted: 0xe67e22,
};

const TITLE: Record<ApprovalStatus, string> = {
  pending: "Approval needed",
  approved: "Approved",
  rejected: "Rejected",
  expired: "Expired — nothing was done",
  cancelled: "Cancelled — nothing was done",
  interrupted: "Interrupted — nothing was done",
};

/** The title; an interrupted run that had started is never said to have done nothing. */
function title(rec: ApprovalRecord): string {
  if (rec.status === "interrupted" && rec.executionStartedAt !== undefined)
    return "Interrupted while running — check before retrying";
  return TITLE[rec.status];
}

/** Only for names and notes Neo writes itself, never for the plan. */
const cut = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
const ts = (ms: number, style: "R" | "f"): string => `<t:${Math.floor(ms / 1000)}:${style}>`;
/** Inline code that a backtick inside the value cannot end early. */
const code = (s: string): string => (s.includes("`") ? `\`\` ${s} \`\`` : `\`${s}\``);

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

interface Field {
  name: string;
  value: string;
  inline?: boolean;
}

function actionLine(a: PlannedAction, i: number): string {
  const spend = a.spend
    ? `${a.spend.amount} ${code(a.spend.asset)}${a.spend.recipient ? ` → ${code(a.spend.recipient)}` : ""}`
    : "no spend read";
  return `**${i + 1}.** ${code(a.tool)} (${spend})\n${code(actionArguments(a))}`;
}

type PlanPart = { ok: true; description: string; fields: Field[] } | { ok: false; reason: string };

/** The plan's description (header, intent, totals) and action fields, whole, or why they cannot be. */
function planPart(rec: ApprovalRecord): PlanPart {
  const n = rec.plan.actions.length;
  const totals = recipientTotals(rec.plan).map((t) => `• ${code(t.recipient)}: ${t.amount} ${code(t.asset)}`);
  const description = [
    `**${n} action${n === 1 ? "" : "s"}** for ${rec.requester.displayName}`,
    `**Intent:** ${rec.plan.intent}`,
    ...(totals.length ? ["**Totals per recipient:**", ...totals] : []),
  ].join("\n");
  if (description.length > EMBED_LIMITS.description) {
    return {
      ok: false,
      reason: `its header and totals need ${description.length} characters, more than an embed description holds (${EMBED_LIMITS.description})`,
    };
  }
  const packed = packLines(rec.plan.actions.map(actionLine), EMBED_LIMITS.fieldValue);
  if (!packed.ok) {
    return {
      ok: false,
      reason: `action ${packed.line + 1} needs ${packed.length} characters, more than an embed field holds (${EMBED_LIMITS.fieldValue})`,
    };
  }
  const fields = packed.chunks.map((value, i) => ({
    name: packed.chunks.length === 1 ? "Actions" : `Actions (part ${i + 1} of ${packed.chunks.length})`,
    value,
  }));
  return { ok: true, description, fields };
}

function frameFields(rec: ApprovalRecord): Field[] {
  const fields: Field[] = [
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
  // A closing note is one short sentence (cap, access, interruption); the reserve holds it.
  if (rec.note) fields.push({ name: "Note", value: cut(rec.note, 300) });
  fields.push({ name: "Plan hash", value: code(rec.planHash) });
  if (rec.outcome) {
    const txs = rec.outcome.txIds.map(code);
    let listed = "";
    let shown = 0;
    for (const t of txs) {
      if (listed.length + t.length + 40 > OUTCOME_MAX) break;
      listed += `${t}\n`;
      shown++;
    }
    const more = txs.length - shown;
    const value = `Transactions:\n${listed || "none\n"}${more > 0 ? `and ${more} more` : ""}`.trim();
    fields.push({ name: `Outcome: ${rec.outcome.status}`, value });
  }
  return fields;
}

function embedSize(e: {
  title: string;
  description: string;
  fields: Field[];
  footer: { text: string };
}): number {
  return (
    e.title.length +
    e.description.length +
    e.footer.text.length +
    e.fields.reduce((n, f) => n + f.name.length + f.value.length, 0)
  );
}

function embedOf(rec: ApprovalRecord, plan: { description: string; fields: Field[] }) {
  return {
    title: title(rec),
    description: plan.description,
    color: COLOR[rec.status],
    fields: [...plan.fields, ...frameFields(rec)],
    footer: { text: `approval ${rec.id}` },
  };
}

/** Whether the record can be shown whole on Discord in every state it can reach. */
export function fitsDiscord(rec: ApprovalRecord): FitCheck {
  const plan = planPart(rec);
  const why = (reason: string): FitCheck => ({
    ok: false,
    reason: `it cannot be shown in full on Discord: ${reason}`,
  });
  if (!plan.ok) return why(plan.reason);
  const embed = embedOf(rec, plan);
  // Later states add at most one field (the outcome) and change a few short lines.
  if (embed.fields.length + 1 > EMBED_LIMITS.fields) {
    return why(
      `it needs ${embed.fields.length + 1} embed fields, more than the ${EMBED_LIMITS.fields} allowed`,
    );
  }
  const size = embedSize(embed) + STATE_RESERVE;
  if (size > EMBED_LIMITS.total) {
    return why(`it needs ${size} characters, more than the ${EMBED_LIMITS.total} an embed holds`);
  }
  return { ok: true };
}

export function renderApproval(rec: ApprovalRecord): DiscordMessageBody {
  const plan = planPart(rec);
  // `fitsDiscord` refused such plans before they were offered; a record that got here is not cut.
  if (!plan.ok) throw new Error(`approval ${rec.id} cannot be shown in full: ${plan.reason}`);
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
  return { embeds: [embedOf(rec, plan)], components };
}
