/**
 * Earlier messages brought into a turn as context ("Name: text", oldest first): the message a
 * mention replies to, and, when Neo joins an existing thread, that thread's recent human messages.
 */
import { type Message, MessageReferenceType } from "discord.js";
import { boundEarlier, comparePositions, EARLIER_MESSAGES } from "../../core/conversations/index.js";
import { isForward, renderDiscordContent } from "./readable.js";

export function speakerName(message: Message): string {
  return message.member?.displayName ?? message.author.globalName ?? message.author.username;
}

/** "Name: text", the text readable (names, dates, what it forwards). */
const line = async (m: Message, neoId: string): Promise<string> =>
  `${speakerName(m)}: ${await renderDiscordContent(m, neoId)}`;

/**
 * `seen`: how far the conversation's transcript already reaches into the thread (a thread whose
 * mark expired while its transcript stayed): only later messages are brought in, each once.
 */
export async function gatherContext(
  message: Message,
  joinThread: boolean,
  neoId: string,
  seen?: string,
): Promise<string[]> {
  const out: string[] = [];
  if (joinThread && message.channel.isThread()) {
    // `before` and `after` are exclusive on Discord: the newest page, then what lies past `seen`.
    const earlier = await message.channel.messages.fetch({ before: message.id, limit: EARLIER_MESSAGES });
    const human = [...earlier.values()].filter(
      (m) =>
        !m.author.bot &&
        (m.content.trim() || isForward(m)) &&
        !m.system &&
        (seen === undefined || comparePositions(m.id, seen) > 0),
    );
    // Snowflakes order messages exactly (timestamps tie within a millisecond).
    human.sort((a, b) => comparePositions(a.id, b.id));
    out.push(...boundEarlier(await Promise.all(human.map((m) => line(m, neoId)))));
  }
  // A reply brings the message it answers; a forward is not a reply (its content is its own).
  if (message.reference?.messageId && message.reference.type !== MessageReferenceType.Forward) {
    const ref = await message.fetchReference();
    const text = await line(ref, neoId);
    if (!out.includes(text) && ref.content.trim()) out.push(text);
  }
  return out;
}
