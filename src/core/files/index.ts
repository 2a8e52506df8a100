export { checkedUrl, downloadFile, FileRefusedError, formatBytes } from "./download.js";
export { createFileIntake, type FileIntake, type IntakeResult } from "./intake.js";
export { fileLimitsFromConfig } from "./limits.js";
export { createFileReader, type FileReader, type FileReaderOptions } from "./read/pool.js";
export {
  DEFAULT_FILE_LIMITS,
  type FileKind,
  type FileLimits,
  type FileRef,
  type FileSource,
  type InboundFile,
} from "./types.js";
