import type { Config } from "../../config.js";
import type { FileLimits } from "./types.js";

export function fileLimitsFromConfig(
  cfg: Pick<
    Config,
    "NEO_FILE_MAX_BYTES" | "NEO_FILES_PER_MESSAGE" | "NEO_FILE_TEXT_TOKENS" | "NEO_MAIN_MODEL_VISION"
  >,
): FileLimits {
  return {
    maxBytes: cfg.NEO_FILE_MAX_BYTES,
    perMessage: cfg.NEO_FILES_PER_MESSAGE,
    textTokens: cfg.NEO_FILE_TEXT_TOKENS,
    vision: cfg.NEO_MAIN_MODEL_VISION,
  };
}
