/**
 * A message's files become part of its transcript message. Images (for a vision model) are kept in
 * the store, not the event log, for the turn they arrive in, so every request of that turn (and
 * the turn resumed after a restart) shows them without downloading them again; `release` deletes
 * them when the turn ends. Text-like files and PDFs become text in the message; anything else, and
 * anything refused, is named with its type and size and why it was not read.
 */
import { createHash } from "node:crypto";
import type { Store } from "../../store/types.js";
import type { ConversationKey } from "../keys.js";
import type { Message } from "../llm/types.js";
import { log } from "../log.js";
import { decodeText, imageTypeOf, looksLikeImage, looksLikePdf, looksLikeText } from "./classify.js";
import { downloadFile, FileRefusedError, formatBytes } from "./download.js";
import { pdfText, truncateToTokens } from "./extract.js";
import type { FileLimits, FileRef, FileSource, InboundFile } from "./types.js";

/** Kept image bytes outlive a turn only if the process dies and nobody resumes it. */
const KEEP_TTL_MS = 24 * 60 * 60 * 1000;

interface KeptImage {
  sha256: string;
  dataUrl: string;
}

export interface IntakeResult {
  /** Lines for the transcript message: each file named, text-like files' text in full or cut. */
  text: string;
  refs: FileRef[];
  /** What the user is told (files refused). */
  notices: string[];
  /** Images the model will not see because it does not read images. */
  unreadImages: number;
}

export interface FileIntake {
  read(
    conversation: ConversationKey,
    files: readonly InboundFile[],
    source: FileSource | undefined,
    signal?: AbortSignal,
  ): Promise<IntakeResult>;
  /** The images still kept for `messages` (sha256 → data URL), for the request builder. */
  images(conversation: ConversationKey, messages: readonly Message[]): Promise<Map<string, string>>;
  /** The turn ended: delete the kept bytes of every image in `messages`. */
  release(conversation: ConversationKey, messages: readonly Message[]): Promise<void>;
}

const keptKey = (conversation: ConversationKey, fileId: string) => `files:${conversation}:${fileId}`;

function attachedRefs(messages: readonly Message[]): FileRef[] {
  return messages.flatMap((m) => (m.role === "user" ? (m.files ?? []) : [])).filter((f) => f.attached);
}

function header(f: InboundFile, kind: string): string {
  return `[${kind} "${f.name}" (${f.type || "unknown type"}, ${formatBytes(f.size)}, id ${f.id})`;
}

const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

export function createFileIntake(opts: { store?: Store; limits: FileLimits }): FileIntake {
  const { store, limits } = opts;

  const refuse = (f: InboundFile, why: string, out: IntakeResult) => {
    out.refs.push({ id: f.id, name: f.name, type: f.type, size: f.size, kind: "refused" });
    out.text += `\n${header(f, "File")}: not read: ${why}]`;
    out.notices.push(`I could not read "${f.name}": ${why}.`);
  };

  const readOne = async (
    conversation: ConversationKey,
    f: InboundFile,
    source: FileSource | undefined,
    out: IntakeResult,
    signal?: AbortSignal,
  ) => {
    const image = looksLikeImage(f.type, f.name);
    const pdf = looksLikePdf(f.type, f.name);
    const text = !image && !pdf && looksLikeText(f.type, f.name);
    const ref: FileRef = { id: f.id, name: f.name, type: f.type, size: f.size, kind: "other" };
    if (image && !limits.vision) {
      out.refs.push({ ...ref, kind: "image" });
      out.text += `\n${header(f, "Image")}: not shown: the model I run on does not read images]`;
      out.unreadImages++;
      return;
    }
    if (!image && !pdf && !text) {
      out.refs.push(ref);
      out.text += `\n${header(f, "File")}: not read: I read images, text files and PDFs only]`;
      return;
    }
    if (f.refused) return refuse(f, f.refused, out);
    if (f.size > limits.maxBytes) {
      return refuse(
        f,
        `it is ${formatBytes(f.size)}, more than the ${formatBytes(limits.maxBytes)} limit`,
        out,
      );
    }
    if (!source) return refuse(f, "files cannot be fetched from this platform", out);
    // A turn re-run after a restart finds the image it already fetched.
    if (image && store) {
      const kept = await store.get<KeptImage>(keptKey(conversation, f.id));
      if (kept) {
        out.refs.push({ ...ref, kind: "image", sha256: kept.sha256, attached: true });
        out.text += `\n${header(f, "Image")}, sha256 ${kept.sha256.slice(0, 12)}: attached]`;
        return;
      }
    }
    let got: { bytes: Buffer; type: string };
    try {
      got = await downloadFile(f.url, source, limits.maxBytes, signal);
    } catch (e) {
      if (!(e instanceof FileRefusedError)) {
        if (signal?.aborted) throw e;
        log.warn({ err: (e as Error).message, conversation, file: f.id }, "file download failed");
        return refuse(f, "the download failed", out);
      }
      return refuse(f, e.message, out);
    }
    // A sign-in page instead of the file: the token lacks the scope to read files.
    if (got.type === "text/html" && !/html?$/i.test(f.name)) {
      return refuse(
        f,
        "the platform sent a web page instead of the file (is the files:read scope granted?)",
        out,
      );
    }
    const hash = sha256(got.bytes);
    if (image) {
      const kind = imageTypeOf(got.bytes);
      if (!kind) return refuse(f, "it is not a PNG, JPEG, GIF or WebP image", out);
      if (!store) return refuse(f, "images cannot be kept for the turn here", out);
      const dataUrl = `data:${kind};base64,${got.bytes.toString("base64")}`;
      await store.set<KeptImage>(keptKey(conversation, f.id), { sha256: hash, dataUrl }, KEEP_TTL_MS);
      out.refs.push({ ...ref, kind: "image", sha256: hash, attached: true });
      out.text += `\n${header(f, "Image")}, sha256 ${hash.slice(0, 12)}: attached]`;
      return;
    }
    let body: string | undefined;
    if (pdf) {
      try {
        body = await pdfText(got.bytes, limits.textTokens * 8);
      } catch {
        return refuse(f, "it is not a readable PDF", out);
      }
      if (!body.trim()) return refuse(f, "the PDF has no text layer (a scan?)", out);
    } else {
      body = decodeText(got.bytes);
      if (body === undefined) return refuse(f, "it is binary, not text", out);
    }
    out.refs.push({ ...ref, kind: pdf ? "pdf" : "text", sha256: hash });
    const shown = truncateToTokens(body, limits.textTokens, f.name);
    out.text += `\n${header(f, "File")}, sha256 ${hash.slice(0, 12)}, its text:]\n${shown}\n[end of "${f.name}"]`;
  };

  return {
    async read(conversation, files, source, signal) {
      const out: IntakeResult = { text: "", refs: [], notices: [], unreadImages: 0 };
      for (const [i, f] of files.entries()) {
        if (i >= limits.perMessage) {
          out.refs.push({ id: f.id, name: f.name, type: f.type, size: f.size, kind: "refused" });
          out.text += `\n${header(f, "File")}: not read: only the first ${limits.perMessage} files of a message are read]`;
          continue;
        }
        await readOne(conversation, f, source, out, signal);
      }
      if (files.length > limits.perMessage) {
        out.notices.push(
          `I read only the first ${limits.perMessage} of the ${files.length} files in your message; send the others separately.`,
        );
      }
      out.text = out.text.trimStart();
      return out;
    },
    async images(conversation, messages) {
      const map = new Map<string, string>();
      if (!store) return map;
      for (const f of attachedRefs(messages)) {
        const kept = await store.get<KeptImage>(keptKey(conversation, f.id));
        if (kept && kept.sha256 === f.sha256) map.set(kept.sha256, kept.dataUrl);
      }
      return map;
    },
    async release(conversation, messages) {
      if (!store) return;
      for (const f of attachedRefs(messages)) await store.delete(keptKey(conversation, f.id));
    },
  };
}
