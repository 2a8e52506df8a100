/**
 * What the loop says about files beyond the intake's own notices: that images are not read by a
 * text-only model, told once per conversation (the transcript remembers whether it was).
 */
import type { Message } from "../llm/types.js";

export const IMAGES_UNREAD_NOTICE =
  "I can't see images with the model I run on, so I only know the names of the images you send. Paste text or describe the image if it matters.";

/** Whether the transcript already holds an image the model could not read (so the user was told). */
export function imagesToldUnread(working: readonly Message[]): boolean {
  return working.some((m) => m.role === "user" && m.files?.some((f) => f.kind === "image" && !f.attached));
}
