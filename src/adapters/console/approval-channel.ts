/**
 * The console's ApprovalChannel: prints the plan and asks `Approve? [y/N]` on the terminal, then
 * decides through the broker as the console user, exactly like a button click on a platform. The
 * answer source is injectable (`ask`), so tests answer through this same code path without a TTY.
 */
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { renderPlan, renderStatus } from "../../core/approvals/render.js";
import type { ApprovalChannel, DecideResult, Decision } from "../../core/approvals/types.js";
import type { UserKey } from "../../core/keys.js";

/** Ask one question; resolves with the typed line, or null when the input has ended. */
export type Ask = (prompt: string) => Promise<string | null>;

export interface ConsoleApprovalChannelOptions {
  /** `ApprovalBroker.decide`. */
  decide: (approvalId: string, clicker: UserKey, decision: Decision) => Promise<DecideResult>;
  /** The console user's key (the requester of console turns). */
  userKey: UserKey;
  ask: Ask;
  /** Where the plan and the decision's result are printed. */
  write: (text: string) => void;
}

export const APPROVE_PROMPT = "Approve? [y/N] ";

/** Only an explicit yes approves; Enter or anything else rejects (the default is No). */
export function parseAnswer(line: string): Decision {
  return /^\s*(y|yes)\s*$/i.test(line) ? "approve" : "reject";
}

/**
 * Answers read line by line from a stream (stdin, or a PassThrough in tests). Lines typed before
 * the question is asked are kept in order, not lost.
 */
export function askFromStream(input: Readable, output: Writable): Ask {
  const rl = createInterface({ input, terminal: false });
  const lines: string[] = [];
  const waiting: Array<(line: string | null) => void> = [];
  let ended = false;
  rl.on("line", (line) => {
    const next = waiting.shift();
    if (next) next(line);
    else lines.push(line);
  });
  rl.on("close", () => {
    ended = true;
    for (const w of waiting.splice(0)) w(null);
  });
  return (prompt) => {
    output.write(prompt);
    const line = lines.shift();
    if (line !== undefined) return Promise.resolve(line);
    if (ended) return Promise.resolve(null);
    return new Promise((resolve) => waiting.push(resolve));
  };
}

export function createConsoleApprovalChannel(opts: ConsoleApprovalChannelOptions): ApprovalChannel {
  async function answer(approvalId: string): Promise<void> {
    const line = await opts.ask(APPROVE_PROMPT);
    if (line === null) {
      opts.write("No answer (input closed); the approval will expire and nothing will run.\n");
      return;
    }
    const result = await opts.decide(approvalId, opts.userKey, parseAnswer(line));
    if (!result.ok) opts.write(`${result.message}\n`);
  }

  return {
    async present(record) {
      opts.write(`\nApproval needed (expires ${new Date(record.expiresAt).toISOString()}):\n`);
      opts.write(`${renderPlan(record.plan)}\nPlan ${record.planHash}\n`);
      // The question runs on its own: present() returns at once, like posting a message with buttons.
      void answer(record.id).catch((err: unknown) => {
        opts.write(`Could not record your answer: ${err instanceof Error ? err.message : String(err)}\n`);
      });
      return `console:${record.id}`;
    },
    async update(record) {
      opts.write(`${renderStatus(record)}\n`);
    },
  };
}
