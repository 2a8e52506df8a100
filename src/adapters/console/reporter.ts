/**
 * The console Reporter (seed: stdoutReporter): Say → stdout, Status and Notice → stderr. A draft is
 * printed as it arrives; a terminal cannot take text back, so a draft that starts over says so on a
 * line of its own, and a discarded one (narration before tool calls) simply ends its line.
 */
import type { Writable } from "node:stream";
import type { AnswerDraft, Reporter } from "../../core/reporter.js";

/** Printed when a retried answer does not continue what was already printed. */
export const STARTS_OVER = "[the answer starts over]";

function consoleDraft(out: Writable): AnswerDraft {
  let printed = "";
  const show = (text: string): void => {
    const kept = printed.trimEnd();
    if (text.startsWith(printed)) out.write(text.slice(printed.length));
    else if (text.startsWith(kept)) out.write(text.slice(kept.length));
    else out.write(`\n${STARTS_OVER}\n${text}`);
    printed = text;
  };
  return {
    update: show,
    finish: async (text) => {
      show(text);
      out.write("\n");
    },
    discard: async () => {
      if (printed && !printed.endsWith("\n")) out.write("\n");
    },
  };
}

export function createConsoleReporter(out: Writable, err: Writable): Reporter {
  return {
    say: async (text) => {
      out.write(`${text}\n`);
    },
    status: async (text) => {
      err.write(`${text}\n`);
    },
    notice: async (text) => {
      err.write(`${text}\n`);
    },
    draft: () => consoleDraft(out),
  };
}
