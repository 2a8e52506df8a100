/**
 * The assistant-panel threads this process has seen, whose Status is the thread's own
 * (`assistant.threads.setStatus`) rather than a status message: the most recently seen
 * `MAX_ASSISTANT_THREADS` of them, so a long-running process does not keep every thread it ever saw.
 * Every event of a thread (started, context changed, a question) marks it seen again before its
 * status is shown, so a forgotten thread is known again at its next question; only a turn during
 * which that many other threads were seen shows the rest of its status as a thread message.
 */

export const MAX_ASSISTANT_THREADS = 10_000;

export interface AssistantThreads {
  seen(team: string, channel: string, threadTs: string): void;
  has(team: string, channel: string, threadTs: string): boolean;
}

export function createAssistantThreads(max = MAX_ASSISTANT_THREADS): AssistantThreads {
  /** Insertion order is the order last seen: the first is the one to forget. */
  const threads = new Set<string>();
  const keyOf = (team: string, channel: string, threadTs: string) => `${team}:${channel}:${threadTs}`;
  return {
    seen(team, channel, threadTs) {
      const key = keyOf(team, channel, threadTs);
      threads.delete(key);
      threads.add(key);
      if (threads.size > max) threads.delete(threads.values().next().value as string);
    },
    has: (team, channel, threadTs) => threads.has(keyOf(team, channel, threadTs)),
  };
}
