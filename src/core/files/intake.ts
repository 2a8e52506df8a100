/**
 * A message's files become part of its transcript message. Each file is downloaded here and read
 * in a worker (./read/pool.ts): images checked and re-encoded for a vision model and kept in this
 * process's memory for the turn they arrive in (./kept-images.ts), text-like files and PDFs cut to
 * a budget of real tokens and fenced (./fence.ts). Anything else, and anything refused, is named
 * with its type and size and why it was not read; the user is told what was refused or cut.
 *
 * Budgets of file text, in real tokens (an upper bound, ./read/tokens.ts): one file at most
 * `textTokens`, one message's files together at most `messageTokens`, and never more than the
 * `room` the turn leaves for files in the context window.
 */
import type { Store } from "../../store/types.js";
import { type ConversationKey, hashTag } from "../keys.js";
import type { Message } from "../llm/types.js";
import { log } from "../log.js";
import { looksLikeImage, looksLikePdf, looksLikeText } from "./classify.js";
import { downloadFile, FileRefusedError, formatBytes } from "./download.js";
import { drawNonce, fencedText, quotedName } from "./fence.js";
import { createKeptImages } from "./kept-images.js";
import { createFileReader, type FileReader } from "./read/pool.js";
import type { ImageRead, ReadCaps, ReadKind, ReadResult } from "./read/protocol.js";
import type { FileLimits, FileRef, FileSource, InboundFile } from "./types.js";

/** Less room than this for a file's text, and it is not read at all. */
const MIN_FILE_TOKENS = 50;

export interface IntakeResult {
  /** Lines for the transcript message: each file named, text-like files' text fenced, in full or cut. */
  text: string;
  refs: FileRef[];
  /** What the user is told (files refused or cut). */
  notices: string[];
  /** Images the model will not see because it does not read images. */
  unreadImages: number;
}

export interface FileIntake {
  /** Read `files`; their text takes at most `room` tokens (what the window has left for files). */
  read(
    conversation: ConversationKey,
    files: readonly InboundFile[],
    source: FileSource | undefined,
    signal: AbortSignal | undefined,
    room: number,
  ): Promise<IntakeResult>;
  /**
   * The images of `messages` still attached (sha256 → data URL), for the request builder: those
   * this process kept, and those of a turn resumed here fetched and checked again.
   */
  images(
    conversation: ConversationKey,
    messages: readonly Message[],
    source: FileSource | undefined,
    signal?: AbortSignal,
  ): Promise<Map<string, string>>;
  /** The turn ended: drop the kept bytes of every image in `messages`. */
  release(conversation: ConversationKey, messages: readonly Message[]): Promise<void>;
  /** End the reader workers. */
  close(): Promise<void>;
}

function attachedRefs(messages: readonly Message[]): FileRef[] {
  return messages.flatMap((m) => (m.role === "user" ? (m.files ?? []) : [])).filter((f) => f.attached);
}

/** A MIME type as the platform declared it, when it looks like one (it is shown to the model). */
const typeOf = (t: string) => (/^[\w.+-]{1,60}\/[\w.+-]{1,80}$/.test(t) ? t : "unknown type");

function header(f: InboundFile, kind: string): string {
  return `[${kind} ${quotedName(f.name)} (${typeOf(f.type)}, ${formatBytes(f.size)}, id ${f.id})`;
}

const n = (x: number) => x.toLocaleString("en-US");

/** A reference to an image of a running turn: where to fetch it again, and what it must hash to. */
interface ImageClaim {
  sha256: string;
  url: string;
}

/** Claims outlive their turn only if the process dies and nobody resumes it. */
const CLAIM_TTL_MS = 24 * 60 * 60 * 1000;

const claimKey = (conversation: ConversationKey, fileId: string) =>
  `files:${hashTag(conversation)}:${fileId}`;

/**
 * `store` holds a claim (the image's URL and hash, never its bytes) for each image of a running
 * turn, so a turn resumed by another process fetches it again; a released image has no claim.
 * `reader`: the worker pool to read with, owned by the caller (tests share one); without it the
 * intake starts its own, from `limits`, on its first file, and ends it on `close`.
 */
export function createFileIntake(opts: {
  limits: FileLimits;
  store?: Store;
  reader?: FileReader;
}): FileIntake {
  const { limits, store } = opts;
  const kept = createKeptImages();
  let reader = opts.reader;
  let own: FileReader | undefined;
  const caps = (textTokens: number): ReadCaps => ({
    textTokens,
    pdfPages: limits.pdfPages,
    pdfObjects: limits.pdfObjects,
    imagePixels: limits.imagePixels,
  });
  const readBytes = (kind: ReadKind, bytes: Uint8Array, textTokens: number, signal?: AbortSignal) => {
    reader ??= createFileReader({
      workers: limits.workers,
      timeoutMs: limits.readMs,
      memoryMb: limits.readMb,
    });
    return reader.read({ kind, bytes, caps: caps(textTokens) }, signal);
  };

  /** The bytes of `f`, or the reason they could not be had. */
  const download = async (
    f: { id: string; url: string; name: string },
    source: FileSource,
    conversation: string,
    signal?: AbortSignal,
  ): Promise<{ bytes: Buffer; type: string } | string> => {
    try {
      return await downloadFile(f.url, source, limits.maxBytes, signal);
    } catch (e) {
      if (e instanceof FileRefusedError) return e.message;
      if (signal?.aborted) throw e;
      log.warn({ err: (e as Error).message, conversation, file: f.id }, "file download failed");
      return "the download failed";
    }
  };

  const dataUrl = (r: ImageRead) =>
    `data:${r.sent.type};base64,${Buffer.from(r.sent.bytes).toString("base64")}`;

  return {
    async read(conversation, files, source, signal, room) {
      const out: IntakeResult = { text: "", refs: [], notices: [], unreadImages: 0 };
      let left = Math.min(limits.messageTokens, room);
      // Neo's lines, and the files' texts to fence once the nonce is drawn (one none of them contains).
      const parts: Array<string | { head: string; text: string; after?: string }> = [];
      const say = (line: string) => parts.push(line);

      const refuse = (f: InboundFile, why: string) => {
        out.refs.push({ id: f.id, name: f.name, type: f.type, size: f.size, kind: "refused" });
        say(`${header(f, "File")}: not read: ${why}]`);
        out.notices.push(`I could not read ${quotedName(f.name)}: ${why}.`);
      };

      const readOne = async (f: InboundFile) => {
        const image = looksLikeImage(f.type, f.name);
        const pdf = looksLikePdf(f.type, f.name);
        const text = !image && !pdf && looksLikeText(f.type, f.name);
        const ref: FileRef = { id: f.id, name: f.name, type: f.type, size: f.size, kind: "other" };
        if (image && !limits.vision) {
          out.refs.push({ ...ref, kind: "image" });
          say(`${header(f, "Image")}: not shown: the model I run on does not read images]`);
          out.unreadImages++;
          return;
        }
        if (!image && !pdf && !text) {
          out.refs.push(ref);
          say(`${header(f, "File")}: not read: I read images, text files and PDFs only]`);
          return;
        }
        if (f.refused) return refuse(f, f.refused);
        if (f.size > limits.maxBytes) {
          return refuse(
            f,
            `it is ${formatBytes(f.size)}, more than the ${formatBytes(limits.maxBytes)} limit`,
          );
        }
        if (!image && left < MIN_FILE_TOKENS) {
          return refuse(
            f,
            "the files before it already take all the room I have for files in this conversation",
          );
        }
        if (!source) return refuse(f, "files cannot be fetched from this platform");
        if (image && !store) return refuse(f, "images cannot be kept for the turn here");
        const got = await download(f, source, conversation, signal);
        if (typeof got === "string") return refuse(f, got);
        // A sign-in page instead of the file: the token lacks the scope to read files.
        if (got.type === "text/html" && !/html?$/i.test(f.name)) {
          return refuse(
            f,
            "the platform sent a web page instead of the file (is the files:read scope granted?)",
          );
        }
        const allowance = Math.min(limits.textTokens, left);
        const res: ReadResult = await readBytes(
          image ? "image" : pdf ? "pdf" : "text",
          got.bytes,
          allowance,
          signal,
        );
        if (!res.ok) return refuse(f, res.why);
        if (res.kind === "image") {
          await store?.set<ImageClaim>(
            claimKey(conversation, f.id),
            { sha256: res.sha256, url: f.url },
            CLAIM_TTL_MS,
          );
          kept.set(conversation, f.id, res.sha256, dataUrl(res));
          out.refs.push({ ...ref, kind: "image", sha256: res.sha256, attached: true });
          const scaled =
            res.sent.width !== res.width || res.sent.height !== res.height
              ? `, shown at ${res.sent.width} × ${res.sent.height} (it is ${res.width} × ${res.height})`
              : "";
          say(`${header(f, "Image")}, sha256 ${res.sha256.slice(0, 12)}: attached${scaled}]`);
          return;
        }
        left -= res.tokens;
        out.refs.push({
          ...ref,
          kind: res.kind,
          sha256: res.sha256,
          tokens: res.tokens,
          estimated: res.estimated,
        });
        const head = `${header(f, "File")}, sha256 ${res.sha256.slice(0, 12)}`;
        const cuts: string[] = [];
        if (res.pages && res.pages.read < res.pages.total && res.cutChars === undefined) {
          cuts.push(`only its first ${n(res.pages.read)} of ${n(res.pages.total)} pages were read`);
        }
        if (res.cutChars !== undefined) {
          cuts.push(`cut after about ${n(res.tokens)} tokens: ${n(res.cutChars)} more characters not shown`);
        }
        parts.push({
          head,
          text: res.text,
          ...(cuts.length ? { after: `[… ${quotedName(f.name)}: ${cuts.join("; ")}]` } : {}),
        });
        if (cuts.length) out.notices.push(`I read only part of ${quotedName(f.name)}: ${cuts.join("; ")}.`);
      };

      for (const [i, f] of files.entries()) {
        if (i >= limits.perMessage) {
          out.refs.push({ id: f.id, name: f.name, type: f.type, size: f.size, kind: "refused" });
          say(
            `${header(f, "File")}: not read: only the first ${limits.perMessage} files of a message are read]`,
          );
          continue;
        }
        await readOne(f);
      }
      if (files.length > limits.perMessage) {
        out.notices.push(
          `I read only the first ${limits.perMessage} of the ${files.length} files in your message; send the others separately.`,
        );
      }
      const nonce = drawNonce(parts.flatMap((p) => (typeof p === "string" ? [] : [p.text])));
      out.text = parts
        .map((p) => (typeof p === "string" ? p : fencedText(p.head, p.text, nonce, p.after)))
        .join("\n");
      return out;
    },

    async images(conversation, messages, source, signal) {
      const map = new Map<string, string>();
      for (const f of attachedRefs(messages)) {
        if (!f.sha256) continue;
        const url = kept.get(conversation, f.id, f.sha256);
        if (url) {
          map.set(f.sha256, url);
          continue;
        }
        // A turn resumed in this process: the image is fetched and checked again, and must be the same.
        const claim = await store?.get<ImageClaim>(claimKey(conversation, f.id));
        if (!source || !claim || claim.sha256 !== f.sha256) continue;
        const got = await download({ id: f.id, url: claim.url, name: f.name }, source, conversation, signal);
        const res = typeof got === "string" ? undefined : await readBytes("image", got.bytes, 0, signal);
        if (res?.ok && res.kind === "image" && res.sha256 === f.sha256) {
          kept.set(conversation, f.id, f.sha256, dataUrl(res));
          map.set(f.sha256, dataUrl(res));
        } else {
          log.warn(
            { conversation, file: f.id },
            "a resumed turn's image could not be had again; sent without it",
          );
        }
      }
      return map;
    },

    async release(conversation, messages) {
      for (const f of attachedRefs(messages)) {
        kept.delete(conversation, f.id);
        await store?.delete(claimKey(conversation, f.id));
      }
    },

    async close() {
      await own?.close();
    },
  };
}
