/**
 * Slack message content as the model should read it: `<@U…>` becomes `@Alice`, `<#C…|>` becomes
 * `#general`, `<!here>` a word, `<!date^…>` ISO text, links `label (url)`; files Neo does not read
 * (earlier thread messages', a shared message's: the message's own go to `core/files`) are described by
 * name, type and size, and shared/forwarded messages are included with who wrote them and where.
 * Names come from what Neo keeps of the workspace (users.ts, places.ts: never waiting for room); a
 * name not known yet (asked of Slack for next time) or a failed lookup falls back to the label
 * Slack sent, else the id, so a message is never lost to, or held up by, a lookup.
 */
import { z } from "zod";
import { attachedLine, isoOf } from "../../core/readable-text.js";
import type { SlackWorkspaces } from "./workspaces.js";

/** Looks up names in the message's workspace. */
export interface SlackNames {
  user(id: string): Promise<string>;
  channel(id: string): Promise<string>;
}

/** Names as a workspace's directory knows them now ("" when not known yet). */
export function namesIn(workspaces: SlackWorkspaces, teamId: string): SlackNames {
  return {
    user: async (id) => (await workspaces.users(teamId).name(id)) ?? "",
    channel: async (id) => (await workspaces.channels(teamId).name(id)) ?? "",
  };
}

/** The parts of a Slack message the model reads. */
export interface SlackContent {
  text?: string;
  /** Files described, not read: an earlier message's or a shared one's (the message's own are read). */
  files?: unknown[];
  attachments?: unknown[];
}

const TOKEN = /<([^<>]*)>/g;

const unescapeSlack = (s: string): string =>
  s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");

async function lookup(get: () => Promise<string>, fallback: string): Promise<string> {
  try {
    return (await get()) || fallback;
  } catch {
    return fallback; // users.info / conversations.info refused or failed: the label or id still says who
  }
}

/** One `<…>` token → readable text. */
async function renderToken(inner: string, names: SlackNames, botUserId: string): Promise<string> {
  const bar = inner.indexOf("|");
  const head = bar < 0 ? inner : inner.slice(0, bar);
  const label = bar < 0 ? "" : unescapeSlack(inner.slice(bar + 1));
  if (head.startsWith("@")) {
    const id = head.slice(1);
    if (id === botUserId) return ""; // Neo's own mention is how it was addressed, not content
    return `@${await lookup(() => names.user(id), label || id)}`;
  }
  if (head.startsWith("#")) {
    const id = head.slice(1);
    return `#${label || (await lookup(() => names.channel(id), id))}`;
  }
  if (head.startsWith("!")) {
    const [word = "", ...rest] = head.slice(1).split("^");
    if (word === "here" || word === "channel" || word === "everyone") return `@${word}`;
    if (word === "subteam") return label || "@(user group)";
    if (word === "date") {
      const seconds = Number(rest[0]);
      return Number.isFinite(seconds) ? isoOf(seconds) : label;
    }
    return label || `@${word}`;
  }
  // A link: `<url>` or `<url|label>` (mailto: included).
  const url = unescapeSlack(head);
  if (!label || label === url || `mailto:${label}` === url) return url.replace(/^mailto:/, "");
  return `${label} (${url})`;
}

/** Slack mrkdwn markup → plain text with names, ISO dates and readable links. */
export async function renderSlackText(text: string, names: SlackNames, botUserId: string): Promise<string> {
  const parts: Array<string | Promise<string>> = [];
  let last = 0;
  for (const m of text.matchAll(TOKEN)) {
    parts.push(unescapeSlack(text.slice(last, m.index)));
    parts.push(renderToken(m[1] ?? "", names, botUserId));
    last = m.index + m[0].length;
  }
  parts.push(unescapeSlack(text.slice(last)));
  return (await Promise.all(parts))
    .join("")
    .replace(/[ \t]{2,}/g, " ")
    .trim();
}

/** True when the text holds nothing once Neo's own mention is gone (a bare "@Neo"). */
/** Per bot user id (one per workspace): the pattern of a mention of Neo, compiled once. */
const neoMentions = new Map<string, RegExp>();

export function onlyMentionsNeo(text: string, botUserId: string): boolean {
  let re = neoMentions.get(botUserId);
  if (!re) {
    re = new RegExp(`<@${botUserId}(\\|[^>]*)?>`, "g");
    neoMentions.set(botUserId, re);
  }
  return !text.replace(re, "").trim();
}

const fileSchema = z.object({
  name: z.string().nullish(),
  title: z.string().nullish(),
  mimetype: z.string().nullish(),
  pretty_type: z.string().nullish(),
  size: z.number().nullish(),
});

/**
 * Files Neo does not read (a message's own files are read by `core/files`), described one line
 * each: `[attached: report.csv, text/csv, 12 KB]`.
 */
export function describeSlackFiles(files: readonly unknown[]): string[] {
  return files.map((raw) => {
    const f = fileSchema.safeParse(raw);
    if (!f.success) return "[attached: a file]";
    return attachedLine(
      f.data.name || f.data.title || "unnamed file",
      f.data.mimetype || f.data.pretty_type,
      f.data.size,
    );
  });
}

const shareSchema = z.object({
  is_share: z.boolean().nullish(),
  is_msg_unfurl: z.boolean().nullish(),
  author_id: z.string().nullish(),
  author_name: z.string().nullish(),
  author_subname: z.string().nullish(),
  channel_id: z.string().nullish(),
  channel_name: z.string().nullish(),
  from_url: z.string().nullish(),
  ts: z.union([z.string(), z.number()]).nullish(),
  text: z.string().nullish(),
  fallback: z.string().nullish(),
  files: z.array(z.unknown()).nullish(),
});

/** Shared and forwarded messages (`attachments` with `is_share` / `is_msg_unfurl`), with their origin. */
async function describeShares(
  attachments: readonly unknown[],
  names: SlackNames,
  botUserId: string,
): Promise<string[]> {
  const out: string[] = [];
  for (const raw of attachments) {
    const a = shareSchema.safeParse(raw);
    if (!a.success || !(a.data.is_share || a.data.is_msg_unfurl)) continue;
    const s = a.data;
    const who = s.author_id
      ? `@${await lookup(() => names.user(s.author_id!), s.author_name || s.author_subname || s.author_id!)}`
      : s.author_name || s.author_subname;
    const where = s.channel_id
      ? `#${s.channel_name || (await lookup(() => names.channel(s.channel_id!), s.channel_id!))}`
      : undefined;
    const when =
      s.ts !== undefined && s.ts !== null && Number.isFinite(Number(s.ts))
        ? isoOf(Math.floor(Number(s.ts)))
        : undefined;
    const origin = [who && `from ${who}`, where && `in ${where}`, when && `at ${when}`]
      .filter(Boolean)
      .join(" ");
    const body = await renderSlackText(s.text ?? s.fallback ?? "", names, botUserId);
    const files = describeSlackFiles(s.files ?? []);
    const link = s.from_url ? ` (${s.from_url})` : "";
    out.push(
      `[shared message${origin ? ` ${origin}` : ""}${link}]\n${[body, ...files].filter(Boolean).join("\n")}`,
    );
  }
  return out;
}

/** A whole message for the model: its text, then its files, then what it shares. */
export async function renderSlackContent(
  m: SlackContent,
  names: SlackNames,
  botUserId: string,
): Promise<string> {
  const [text, shares] = await Promise.all([
    renderSlackText(m.text ?? "", names, botUserId),
    describeShares(m.attachments ?? [], names, botUserId),
  ]);
  return [text, ...describeSlackFiles(m.files ?? []), ...shares].filter(Boolean).join("\n");
}
