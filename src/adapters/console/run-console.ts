/**
 * Start the terminal chat on the given streams and resolve when it ends. The approval channel is
 * built by the caller from the console's `ask`, so approval prompts share the one stdin reader.
 */
import { userInfo } from "node:os";
import type { Readable, Writable } from "node:stream";
import { createAgent } from "../../core/agent/agent.js";
import type { AgentDeps } from "../../core/agent/deps.js";
import type { ApprovalChannel } from "../../core/approvals/types.js";
import { conversationKey, type Speaker, userKey } from "../../core/keys.js";
import { createConsoleChat } from "./console-chat.js";
import { createConsoleForms } from "./forms.js";
import { createLineRouter } from "./line-router.js";
import { createConsoleReporter } from "./reporter.js";

export interface RunConsoleOptions {
  deps: AgentDeps;
  approvals: (ask: (prompt: string) => Promise<string | null>) => ApprovalChannel;
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  /** Shown once at start (model names, how to exit). */
  banner: string;
}

export const CONSOLE_CONVERSATION = conversationKey({
  platform: "console",
  workspace: "local",
  channel: "tty",
  thread: "main",
});

export function consoleSpeaker(): Speaker {
  const name = userInfo().username || "you";
  return { userKey: userKey({ platform: "console", workspace: "local", user: name }), displayName: name };
}

export async function runConsole(opts: RunConsoleOptions): Promise<void> {
  const lines = createLineRouter(opts.stdin, opts.stderr);
  const note = (text: string) => opts.stderr.write(`${text}\n`);
  const chat = createConsoleChat({
    agent: createAgent(opts.deps),
    io: {
      reporter: createConsoleReporter(opts.stdout, opts.stderr),
      approvals: opts.approvals(lines.ask),
      forms: createConsoleForms(lines.ask, (text) => opts.stderr.write(text)),
    },
    lines,
    speaker: consoleSpeaker(),
    conversation: CONSOLE_CONVERSATION,
    note,
  });
  // Piped stdin (no TTY) gets Ctrl-C as a process signal rather than through readline.
  process.on("SIGINT", chat.interrupt);
  note(opts.banner);
  try {
    await chat.done;
  } finally {
    process.off("SIGINT", chat.interrupt);
  }
}
