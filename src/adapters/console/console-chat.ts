/**
 * The interactive terminal chat: one conversation, one user. Lines typed while a turn runs are
 * queued and reach the model at its next cancellation point. Ctrl-C cancels the running turn; a
 * second Ctrl-C, or Ctrl-C when idle, exits. End of input waits for the running turn, then exits.
 */
import type { Agent } from "../../core/agent/agent.js";
import type { TurnInput } from "../../core/agent/types.js";
import type { ConversationIO } from "../../core/conversations/types.js";
import type { ConversationKey, Speaker } from "../../core/keys.js";
import { CONSOLE_PLACE } from "../../core/place.js";
import type { LineRouter } from "./line-router.js";

export interface ConsoleChatOptions {
  agent: Agent;
  io: ConversationIO;
  lines: LineRouter;
  speaker: Speaker;
  conversation: ConversationKey;
  /** Where the chat's own messages (cancelled, bye) go: stderr. */
  note: (text: string) => void;
}

export interface ConsoleChat {
  /** Resolves when the chat ends (Ctrl-C when idle, a second Ctrl-C, or end of input). */
  done: Promise<void>;
  /** Ctrl-C: cancel the running turn, or end the chat. */
  interrupt(): void;
}

export function createConsoleChat(opts: ConsoleChatOptions): ConsoleChat {
  const queue: TurnInput[] = [];
  let running: AbortController | null = null;
  let inputEnded = false;
  let finish: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  let finished = false;
  const end = () => {
    if (finished) return;
    finished = true;
    opts.lines.close();
    finish();
  };

  const pump = async () => {
    while (!running && queue.length) {
      const input = queue.shift()!;
      const controller = new AbortController();
      running = controller;
      try {
        await opts.agent.chat(input, {
          conversation: opts.conversation,
          shared: false,
          place: CONSOLE_PLACE,
          reporter: opts.io.reporter,
          approvals: opts.io.approvals,
          ...(opts.io.forms ? { forms: opts.io.forms } : {}),
          signal: controller.signal,
          drainInbox: () => queue.splice(0),
        });
      } finally {
        running = null;
      }
    }
    if (inputEnded && !running && !queue.length) end();
  };
  const kick = () => {
    pump().catch((e: unknown) => {
      opts.note(`Turn failed: ${e instanceof Error ? e.message : String(e)}`);
      end();
    });
  };

  opts.lines.onLine((line) => {
    const text = line.trim();
    if (!text) return;
    queue.push({ text, speaker: opts.speaker });
    kick();
  });
  opts.lines.onEnd(() => {
    inputEnded = true;
    kick();
  });

  const interrupt = () => {
    if (running && !running.signal.aborted) {
      running.abort();
      queue.length = 0;
      opts.note("Cancelled. (Ctrl-C again to exit.)");
      return;
    }
    opts.note("Bye.");
    end();
  };
  opts.lines.onInterrupt(interrupt);
  return { done, interrupt };
}
