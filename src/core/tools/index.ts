/** The tool surface's public API. */

export type { ToolInfo } from "./bound-tools.js";
export { classifyTool, DEFAULT_ESCALATE_PATTERNS, type ToolClass } from "./classify.js";
export { ManifestError, MissingEnvVarError } from "./errors.js";
export {
  loadManifest,
  type Manifest,
  type ManifestInput,
  manifestSchema,
  parseManifest,
  type ServerSpec,
  type ServerSpecInput,
} from "./manifest.js";
export { bindNames, candidateName, VALID_NAME } from "./naming.js";
export { renderResult, truncateResult } from "./render.js";
export { normalizeInputSchema } from "./schema-normalize.js";
export type { ServerInfo, ServerStatus } from "./server-connection.js";
export { createToolSurface, type McpToolSurface, type SurfaceWarning } from "./surface.js";
export {
  DEFAULT_MAX_RESTARTS,
  DEFAULT_SPAWN_TIMEOUT_MS,
  type ToolSurfaceOptions,
} from "./surface-options.js";
export type { SyntheticDelegate } from "./synthetic.js";
