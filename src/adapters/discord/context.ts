/**
 * Earlier messages brought into a turn as context ("Name: text", oldest first): the message a
 * mention replies to, and, when Neo joins an existing thread, that thread's recent human messages.
 */
import type { Message } from "discord.js";

/** How many earlier thread messages Neo reads when it is first mentioned in a thread. */
export const THREAD_CONTEXT_LIMIT = 20;

export function speakerName(message: Message): string {
  return message.member?.displayName ?? message.author.globalName ?? message.author.username;
}

const line = (m: Message): string => `${speakerName(m)}: ${m.content}`;

export async function gatherContext(message: Message, joinThread: boolean): Promise<string[]> {
  const out: string[] = [];
  if (joinThread && message.channel.isThread()) {
    const earlier = await message.channel.messages.fetch({ before: message.id, limit: THREAD_CONTEXT_LIMIT });
    const human = [...earlier.values()].filter((m) => !m.author.bot && m.content.trim() && !m.system);
    // Snowflakes order messages exactly (timestamps tie within a millisecond).
    human.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
    out.push(...human.map(line));
  }
  if (message.reference?.messageId) {
    const ref = await message.fetchReference();
    const text = line(ref);
    if (!out.includes(text) && ref.content.trim()) out.push(text);
  }
  return out;
}
