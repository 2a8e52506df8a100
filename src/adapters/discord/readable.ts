/**
 * Discord message content as the model should read it (the counterpart of slack/readable.ts):
 * `<@id>` / `<@!id>` become `@Name`, `<#id>` `#name`, `<@&id>` `@role`, `<t:unix[:style]>` ISO UTC
 * text, `</name:id>` `/name`, custom emoji `:name:`; `@everyone` / `@here` are already words. A
 * forwarded message (reference type FORWARD, with its snapshot) is included with where and when it
 * was first posted, its files described by name, type and size. Names come from the client's caches
 * (guild members, channels, roles), fetched when missing; a lookup that fails leaves the id and is
 * logged, so a message is never lost to a lookup. Neo's own mention is how it was addressed: dropped.
 */
import { type Client, type Guild, type Message, MessageReferenceType } from "discord.js";
import { log } from "../../core/log.js";
import { attachedLine, isoOf } from "../../core/readable-text.js";

/** Looks up the names a message's tokens stand for. */
export interface DiscordNames {
  user(id: string): Promise<string>;
  channel(id: string): Promise<string>;
  role(id: string): Promise<string>;
}

/** Names as the message's guild (or, in a DM, Discord at large) knows them. */
export function namesFor(client: Client, guild: Guild | null): DiscordNames {
  return {
    async user(id) {
      if (guild) {
        // A member's name in this guild (nickname first); one who left is still a Discord user.
        const member = guild.members.cache.get(id) ?? (await guild.members.fetch(id).catch(() => undefined));
        if (member) return member.displayName;
      }
      const u = client.users.cache.get(id) ?? (await client.users.fetch(id));
      return u.globalName ?? u.username;
    },
    async channel(id) {
      const ch = client.channels.cache.get(id) ?? (await client.channels.fetch(id));
      if (ch && "name" in ch && ch.name) return ch.name;
      throw new Error("channel has no name");
    },
    async role(id) {
      if (!guild) throw new Error("a role outside a guild");
      const role = guild.roles.cache.get(id) ?? (await guild.roles.fetch(id));
      if (!role) throw new Error("unknown role");
      return role.name;
    },
  };
}

const dlog = log.child({ component: "discord" });

async function lookup(kind: string, id: string, get: () => Promise<string>): Promise<string> {
  try {
    return (await get()) || id;
  } catch (err) {
    dlog.warn(
      { kind, id, err: (err as Error).message },
      `discord: could not resolve a ${kind} mention; the id is shown`,
    );
    return id;
  }
}

/** `<@id>`, `<@!id>`, `<#id>`, `<@&id>`, `<t:unix[:style]>`, `</name:id>`, `<a:name:id>` / `<:name:id>`. */
const TOKEN =
  /<(@!?|#|@&)(\d{15,21})>|<t:(-?\d{1,13})(?::[tTdDfFR])?>|<\/([^:<>]+):\d{15,21}>|<a?:(\w{2,32}):\d{15,21}>/g;

/** Discord markup → plain text with names and ISO dates. */
export async function renderDiscordText(text: string, names: DiscordNames, neoId: string): Promise<string> {
  const parts: Array<string | Promise<string>> = [];
  let last = 0;
  for (const m of text.matchAll(TOKEN)) {
    parts.push(text.slice(last, m.index));
    last = m.index + m[0].length;
    const [, sigil, id, unix, command, emoji] = m;
    if (id && (sigil === "@" || sigil === "@!"))
      parts.push(id === neoId ? "" : lookup("user", id, () => names.user(id)).then((n) => `@${n}`));
    else if (id && sigil === "#")
      parts.push(lookup("channel", id, () => names.channel(id)).then((n) => `#${n}`));
    else if (id && sigil === "@&") parts.push(lookup("role", id, () => names.role(id)).then((n) => `@${n}`));
    else if (unix !== undefined) parts.push(isoOf(Number(unix)));
    else if (command) parts.push(`/${command}`);
    else if (emoji) parts.push(`:${emoji}:`);
  }
  parts.push(text.slice(last));
  return (await Promise.all(parts))
    .join("")
    .replace(/[ \t]{2,}/g, " ")
    .trim();
}

/** The message forwards another: its content is in the snapshot, not in `content`. */
export function isForward(message: Message): boolean {
  return message.reference?.type === MessageReferenceType.Forward && message.messageSnapshots.size > 0;
}

/** Forwarded messages with their origin: `[forwarded message from #general at … (link)]`, content, files. */
async function describeForwards(message: Message, neoId: string): Promise<string[]> {
  if (!isForward(message)) return [];
  const ref = message.reference!;
  // Names as the guild it was first posted in knows them (a DM forward comes from elsewhere).
  const names = namesFor(
    message.client,
    (ref.guildId && message.client.guilds.cache.get(ref.guildId)) || null,
  );
  const out: string[] = [];
  for (const snap of message.messageSnapshots.values()) {
    const where = await lookup("channel", ref.channelId, () => names.channel(ref.channelId));
    // The snapshot carries the original's id: its snowflake is when it was first posted.
    const when = isoOf(snap.createdTimestamp / 1000);
    const link = `https://discord.com/channels/${ref.guildId ?? "@me"}/${ref.channelId}/${ref.messageId}`;
    const body = await renderDiscordText(snap.content ?? "", names, neoId);
    const files = [...snap.attachments.values()].map((a) => attachedLine(a.name, a.contentType, a.size));
    out.push(
      [`[forwarded message from #${where} at ${when} (${link})]`, body, ...files].filter(Boolean).join("\n"),
    );
  }
  return out;
}

/** A whole message for the model: its text (its own files are read by `core/files`), then what it forwards. */
export async function renderDiscordContent(message: Message, neoId: string): Promise<string> {
  const [text, forwards] = await Promise.all([
    renderDiscordText(message.content, namesFor(message.client, message.guild), neoId),
    describeForwards(message, neoId),
  ]);
  return [text, ...forwards].filter(Boolean).join("\n");
}
