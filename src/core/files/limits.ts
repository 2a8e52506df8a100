import type { Config } from "../../config.js";
import type { FileLimits } from "./types.js";

export function fileLimitsFromConfig(
  cfg: Pick<
    Config,
    | "NEO_FILE_MAX_BYTES"
    | "NEO_FILES_PER_MESSAGE"
    | "NEO_FILE_TEXT_TOKENS"
    | "NEO_FILE_MESSAGE_TOKENS"
    | "NEO_MAIN_MODEL_VISION"
    | "NEO_FILE_WORKERS"
    | "NEO_FILE_READ_MS"
    | "NEO_FILE_READ_MB"
    | "NEO_FILE_PDF_PAGES"
    | "NEO_FILE_PDF_OBJECTS"
    | "NEO_FILE_IMAGE_PIXELS"
  >,
): FileLimits {
  return {
    maxBytes: cfg.NEO_FILE_MAX_BYTES,
    perMessage: cfg.NEO_FILES_PER_MESSAGE,
    textTokens: cfg.NEO_FILE_TEXT_TOKENS,
    messageTokens: cfg.NEO_FILE_MESSAGE_TOKENS,
    vision: cfg.NEO_MAIN_MODEL_VISION,
    workers: cfg.NEO_FILE_WORKERS,
    readMs: cfg.NEO_FILE_READ_MS,
    readMb: cfg.NEO_FILE_READ_MB,
    pdfPages: cfg.NEO_FILE_PDF_PAGES,
    pdfObjects: cfg.NEO_FILE_PDF_OBJECTS,
    imagePixels: cfg.NEO_FILE_IMAGE_PIXELS,
  };
}
