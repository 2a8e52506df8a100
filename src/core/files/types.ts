/**
 * Files on a message, platform-free. An adapter says which files a message carries (`InboundFile`)
 * and how to fetch them (`FileSource`: the platform's hosts and the credential those hosts take);
 * the core downloads, checks and reads them, and the transcript keeps only a `FileRef` and the text
 * read from the file, never its bytes.
 */

/** A file attached to an inbound message, as the adapter describes it (journaled with the message). */
export interface InboundFile {
  /** The platform's id of the file (Slack file id, Discord attachment id). */
  id: string;
  name: string;
  /** MIME type as the platform reports it ("" when it does not). */
  type: string;
  /** Size in bytes as the platform reports it. */
  size: number;
  /** Where the platform serves it (Slack `url_private`, Discord CDN URL). */
  url: string;
  /**
   * Set by the adapter when the platform says the user may not read the file here (another
   * channel's or workspace's, deleted, expired): it is refused without a request.
   */
  refused?: string;
}

/** How a platform's files are fetched. The credential goes only to `hosts`; any other URL is refused. */
export interface FileSource {
  /** Host names (exact) the platform serves files from. */
  hosts: readonly string[];
  /** Headers for those hosts (Slack: the bot token); none for signed URLs (Discord CDN). */
  headers(): Promise<Record<string, string>>;
}

/** What a file became in the transcript. */
export type FileKind = "image" | "text" | "pdf" | "other" | "refused";

/** The transcript's record of a file: enough to name it again, never its bytes. */
export interface FileRef {
  id: string;
  name: string;
  type: string;
  size: number;
  kind: FileKind;
  /** SHA-256 of the bytes read (hex), when they were downloaded. */
  sha256?: string;
  /** Images only: the bytes are kept for the turn so the model sees the image (vision model). */
  attached?: boolean;
  /** Text and PDFs: tokens of the text kept, by the real tokenizer (an upper bound: read/tokens.ts). */
  tokens?: number;
  /** Text and PDFs: what the cheap estimator (budget/estimate.ts) says of that text. */
  estimated?: number;
}

/** Limits of file intake; the defaults are `src/config.ts`'s. */
export interface FileLimits {
  /** Largest file read, in bytes (`NEO_FILE_MAX_BYTES`). */
  maxBytes: number;
  /** Files read per message; the rest are only named (`NEO_FILES_PER_MESSAGE`). */
  perMessage: number;
  /** Tokens of text kept from one text-like file or PDF (`NEO_FILE_TEXT_TOKENS`). */
  textTokens: number;
  /** Tokens of text kept from all the files of one message (`NEO_FILE_MESSAGE_TOKENS`). */
  messageTokens: number;
  /** Whether the main model reads images (`NEO_MAIN_MODEL_VISION`). */
  vision: boolean;
  /** Reader worker threads at most (`NEO_FILE_WORKERS`). */
  workers: number;
  /** Wall time of reading one file, in ms (`NEO_FILE_READ_MS`). */
  readMs: number;
  /** Heap of one reader worker, in MB (`NEO_FILE_READ_MB`). */
  readMb: number;
  /** PDF pages read at most (`NEO_FILE_PDF_PAGES`). */
  pdfPages: number;
  /** PDF objects a readable document declares at most (`NEO_FILE_PDF_OBJECTS`). */
  pdfObjects: number;
  /** Pixels (width × height) an image may declare (`NEO_FILE_IMAGE_PIXELS`). */
  imagePixels: number;
}

export const DEFAULT_FILE_LIMITS: FileLimits = {
  maxBytes: 20 * 1024 * 1024,
  perMessage: 5,
  textTokens: 8000,
  messageTokens: 24_000,
  vision: false,
  workers: 2,
  readMs: 20_000,
  readMb: 256,
  pdfPages: 500,
  pdfObjects: 200_000,
  imagePixels: 50_000_000,
};
