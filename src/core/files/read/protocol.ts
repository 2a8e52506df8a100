/**
 * What the main thread asks a file reader worker and what it answers. Everything here crosses the
 * thread boundary by structured clone (the bytes are transferred, not copied).
 */

export type ReadKind = "text" | "pdf" | "image";

/** The caps one read is held to inside the worker (the wall time and heap are the pool's). */
export interface ReadCaps {
  /** Real (o200k) tokens of text kept from the file. */
  textTokens: number;
  /** PDF pages read at most. */
  pdfPages: number;
  /** PDF objects (`n g obj` headers, compressed object streams counted by their /N) at most. */
  pdfObjects: number;
  /** Decoded pixels (width × height) an image may declare. */
  imagePixels: number;
}

export interface ReadJob {
  kind: ReadKind;
  bytes: Uint8Array;
  caps: ReadCaps;
}

/** Text kept from a text-like file or a PDF. */
export interface TextRead {
  ok: true;
  kind: "text" | "pdf";
  sha256: string;
  text: string;
  /** Tokens of `text` by the real (o200k) tokenizer, counted as an upper bound (./tokens.ts). */
  tokens: number;
  /** What the main thread's cheap estimator (budget/estimate.ts) says of `text`. */
  estimated: number;
  /** Characters left out after `text` (absent when the text was kept whole). */
  cutChars?: number;
  /** PDFs: pages read and pages the document has. */
  pages?: { read: number; total: number };
}

/** An image checked (its whole structure decoded) and re-encoded within the model's limits. */
export interface ImageRead {
  ok: true;
  kind: "image";
  /** SHA-256 of the downloaded bytes (what the platform served). */
  sha256: string;
  /** The format and dimensions the file really has (from its decoded header). */
  format: string;
  width: number;
  height: number;
  /** What goes to the model: the re-encoded image (metadata stripped), maybe downscaled. */
  sent: { type: "image/png" | "image/jpeg"; width: number; height: number; bytes: Uint8Array };
}

/** The file was read and refused: `why` is said to the user as is. */
export interface Refused {
  ok: false;
  why: string;
}

export type ReadResult = TextRead | ImageRead | Refused;

/** A worker's answer: the result and how much heap it holds afterwards (recycled when high). */
export interface WorkerReply {
  result: ReadResult;
  heapUsed: number;
}
