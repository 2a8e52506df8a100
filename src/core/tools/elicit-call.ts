/**
 * One tool call's answerer for a server's `elicitation/create`: asks the turn's requester through
 * the adapter's `FormChannel`, bounded by the call's timeout and the turn's signal (either ends it
 * as `cancel`), and keeps a note for the model when the person declined or did not answer.
 */
import type { ElicitRequest, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { type FormAnswer, type FormQuestion, formFields, noteOf } from "./elicitation.js";
import type { CallElicitor } from "./server-calls.js";
import type { ToolCallContext } from "./types.js";

export function callElicitor(
  ctx: ToolCallContext,
  server: string,
  timeoutMs: number,
  notes: string[],
): CallElicitor {
  return {
    requester: ctx.speaker.userKey,
    async ask(params: ElicitRequest["params"]): Promise<ElicitResult> {
      const question: FormQuestion =
        params.mode === "url"
          ? { mode: "url", server, message: params.message, url: params.url }
          : { mode: "form", server, message: params.message, fields: formFields(params.requestedSchema) };
      const answer = ctx.forms
        ? await within(ctx, timeoutMs, (signal) => ctx.forms!.ask(question, ctx.speaker, signal))
        : CANCEL;
      const note = noteOf(question, answer, ctx.speaker.displayName);
      if (note) notes.push(ctx.forms ? note : `${note.slice(0, -1)}: this place cannot show forms]`);
      return answer.action === "accept" && question.mode === "form"
        ? { action: "accept", content: answer.content ?? {} }
        : { action: answer.action };
    },
  };
}

const CANCEL: FormAnswer = { action: "cancel" };

/** The answer, or cancel once the call's time is up or the turn is cancelled (the form is withdrawn). */
async function within(
  ctx: ToolCallContext,
  timeoutMs: number,
  ask: (signal: AbortSignal) => Promise<FormAnswer>,
): Promise<FormAnswer> {
  const abort = new AbortController();
  const stop = () => abort.abort();
  const timer = setTimeout(stop, timeoutMs);
  ctx.signal.addEventListener("abort", stop, { once: true });
  const ended = new Promise<FormAnswer>((resolve) =>
    abort.signal.addEventListener("abort", () => resolve(CANCEL)),
  );
  try {
    return await Promise.race([ask(abort.signal), ended]);
  } finally {
    clearTimeout(timer);
    ctx.signal.removeEventListener("abort", stop);
    abort.abort();
  }
}
