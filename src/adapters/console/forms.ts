/**
 * The console's FormChannel: a server's question (MCP elicitation) asked on the terminal, through
 * the same `ask` as approval prompts, so tests answer it without a TTY. The terminal has one user,
 * the requester. `y` fills the form field by field (Enter keeps the shown default; a bad value is
 * asked again), `n` declines, anything else (or end of input) dismisses it (cancel).
 */
import type { FormAnswer, FormChannel, FormField } from "../../core/tools/elicitation.js";
import { defaultText, readAnswers } from "../../core/tools/elicitation.js";
import type { Ask } from "./approval-channel.js";

export const FORM_PROMPT = "Answer? [y = answer, n = decline, Enter = skip] ";

function promptOf(f: FormField): string {
  const choices = f.options ? ` (${f.options.map((o) => o.value).join(" / ")})` : "";
  const yesNo = f.type === "boolean" ? " (yes / no)" : "";
  const shown = defaultText(f);
  return `${f.label}${f.required ? "*" : ""}${choices}${yesNo}${shown ? ` [${shown}]` : ""}: `;
}

export function createConsoleForms(ask: Ask, write: (text: string) => void): FormChannel {
  return {
    async tell(note) {
      write(`\n${note.server}: ${note.message}\n${note.url ? `Open: ${note.url}\n` : ""}`);
    },
    async ask(question, _requester, signal) {
      write(`\nServer "${question.server}" asks: ${question.message}\n`);
      if (question.mode === "url") write(`Open: ${question.url}\n`);
      const first = await ask(FORM_PROMPT);
      if (signal.aborted || first === null) return { action: "cancel" };
      if (/^\s*(n|no)\s*$/i.test(first)) return { action: "decline" };
      if (!/^\s*(y|yes)\s*$/i.test(first)) return { action: "cancel" };
      if (question.mode === "url") return { action: "accept" };
      const raw: Record<string, string> = {};
      for (const f of question.fields) {
        for (;;) {
          const line = await ask(promptOf(f));
          if (signal.aborted || line === null) return { action: "cancel" };
          const read = readAnswers([f], { [f.name]: line });
          if (!("error" in read)) {
            raw[f.name] = line;
            break;
          }
          write(`${read.error}\n`);
        }
      }
      const read = readAnswers(question.fields, raw);
      return "error" in read
        ? { action: "cancel" }
        : ({ action: "accept", content: read.content } satisfies FormAnswer);
    },
  };
}
