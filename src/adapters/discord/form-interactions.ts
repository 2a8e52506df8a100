/**
 * Clicks and modal submits on a server's question (`forms.ts`). Only the requester opens, answers,
 * declines or skips it: anyone else is told so privately and nothing changes. A submit is read by
 * `readAnswers`; a missing or mistyped field is told to the requester and the question stays open
 * (Answer opens the form again, with the defaults).
 */
import { type ButtonInteraction, MessageFlags, type ModalSubmitInteraction } from "discord.js";
import { log } from "../../core/log.js";
import { readAnswers } from "../../core/tools/elicitation.js";
import { formModal, MODAL_MAX_INPUTS, parseFormCustomId, pendingForms } from "./forms.js";

const allowedMentions = { parse: [], repliedUser: false } as const;

async function tell(i: ButtonInteraction | ModalSubmitInteraction, content: string): Promise<void> {
  await i.reply({ content, flags: MessageFlags.Ephemeral, allowedMentions });
}

/** Handles a form's button or modal; false when the custom id is not a form's. */
export async function onFormInteraction(i: ButtonInteraction | ModalSubmitInteraction): Promise<boolean> {
  const parsed = parseFormCustomId(i.customId);
  if (!parsed) return false;
  const pending = pendingForms.get(parsed.id);
  if (!pending) {
    await tell(i, "This question is no longer open.");
    return true;
  }
  if (i.user.id !== pending.user) {
    log.info({ clicker: i.user.id }, "discord: form use by someone other than the requester refused");
    await tell(i, "Only the person who asked can answer this question.");
    return true;
  }
  const { question } = pending;
  if (parsed.step === "decline" || parsed.step === "cancel") {
    pending.settle({ action: parsed.step });
    await tell(i, parsed.step === "decline" ? "Declined." : "Skipped.");
    return true;
  }
  if (parsed.step === "open") {
    if (question.mode !== "form" || !i.isButton()) return false;
    await i.showModal(formModal(parsed.id, question));
    return true;
  }
  // submit: the URL mode's Done button, or the modal.
  if (question.mode === "url" || !i.isModalSubmit()) {
    pending.settle({ action: "accept" });
    await tell(i, "Done.");
    return true;
  }
  const raw: Record<string, string> = {};
  for (const f of pending.fields.slice(0, MODAL_MAX_INPUTS)) {
    const input = f.name.slice(0, 100);
    raw[f.name] = i.fields.fields.has(input) ? i.fields.getTextInputValue(input) : "";
  }
  const read = readAnswers(pending.fields, raw);
  if ("error" in read) {
    await tell(i, `${read.error}; the question is still open: press Answer… again.`);
    return true;
  }
  pending.settle({ action: "accept", content: read.content });
  await tell(i, "Sent.");
  return true;
}
