/** The tool surface's public API. */
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
export {
  createToolSurface,
  DEFAULT_MAX_RESTARTS,
  DEFAULT_SPAWN_TIMEOUT_MS,
  type McpToolSurface,
  type SurfaceWarning,
  type SyntheticDelegate,
  type ToolInfo,
  type ToolSurfaceOptions,
} from "./surface.js";
