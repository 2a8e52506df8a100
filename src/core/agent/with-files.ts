/**
 * What the loop does with files beyond the intake: tells the user once per conversation that a
 * text-only model does not read images (the transcript remembers whether it was), says how much room
 * the window has left for file text, and delivers the
 * files tools return, saying in the tool result where they went (so the model never claims the user
 * sees a file that did not arrive).
 */
import type { Message } from "../llm/types.js";
import { log } from "../log.js";
import type { OutboundFile, Reporter } from "../reporter.js";

export const IMAGES_UNREAD_NOTICE =
  "I can't see images with the model I run on, so I only know the names of the images you send. Paste text or describe the image if it matters.";

/** Whether the transcript already holds an image the model could not read (so the user was told). */
export function imagesToldUnread(working: readonly Message[]): boolean {
  return working.some((m) => m.role === "user" && m.files?.some((f) => f.kind === "image" && !f.attached));
}

/** At most this share of the context window is file text (real tokens), whatever the messages. */
export const FILES_WINDOW_SHARE = 0.3;

/**
 * Tokens of file text the window still has room for: its share of the window less the file text
 * already in the working transcript (compaction frees the room of the files it summarises).
 */
export function filesRoom(working: readonly Message[], contextWindow: number): number {
  let used = 0;
  for (const m of working) if (m.role === "user") for (const f of m.files ?? []) used += f.tokens ?? 0;
  return Math.max(0, Math.floor(contextWindow * FILES_WINDOW_SHARE) - used);
}

/**
 * Upload a tool's files into the conversation. A failed upload (or a platform without uploads) is
 * said in text instead: the user is told, and the model reads the note appended to the result.
 */
export async function deliverFiles(
  reporter: Reporter,
  files: readonly OutboundFile[],
  tool: string,
): Promise<string> {
  const names = files.map((f) => f.name).join(", ");
  if (!reporter.upload) return `\n[${names}: not shown to the user: files cannot be sent here]`;
  try {
    await reporter.upload(files, `From ${tool}: ${names}`);
    return `\n[${names}: uploaded to the conversation; the user sees ${files.length > 1 ? "them" : "it"}]`;
  } catch (err) {
    log.warn({ err, tool, files: names }, "file upload failed; told the user in text");
    await reporter.notice(`I could not upload ${names} from ${tool} here (the upload failed).`);
    return `\n[${names}: the upload failed; the user was told it could not be shown]`;
  }
}
