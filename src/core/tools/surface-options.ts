/** How the MCP-backed tool surface is configured (`createToolSurface`), and its defaults. */
import type { Manifest } from "./manifest.js";
import type { OAuthConnections } from "./oauth/sign-in-types.js";
import type { SyntheticDelegate } from "./synthetic.js";

export const DEFAULT_SPAWN_TIMEOUT_MS = 15_000;
export const DEFAULT_MAX_RESTARTS = 3;

export interface ToolSurfaceOptions {
  /** The parsed manifest (`loadManifest`). */
  manifest: Manifest;
  /** Where `${VAR}` placeholders are read from. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Replaces the manifest's escalate patterns (`NEO_ESCALATE_PATTERNS`); a server's own list still wins. */
  escalatePatterns?: readonly string[];
  /** Results above this many characters are cut with a marker (`NEO_TOOL_RESULT_MAX_CHARS`). */
  resultMaxChars: number;
  /** Per-call timeout in ms (`NEO_TOOL_TIMEOUT_MS`); also bounds each `tools/list` page. */
  callTimeoutMs: number;
  /** Default spawn timeout when the manifest gives none. */
  spawnTimeoutMs?: number;
  /** Restarts of a dead server before it is marked failed (until `reload`). Default 3. */
  maxRestarts?: number;
  /** A user's process of a `scope: user` server is stopped after this long without a call. */
  userIdleMs?: number;
  /** Most users' processes of one `scope: user` server at once (`NEO_TOOL_USER_MAX_PROCESSES`). */
  userMaxProcesses?: number;
  /**
   * `core_execute(intent)` delegate. May be wired after construction through a closure (the
   * embedded executor needs the surface first). Unset: `core_execute` answers in-band that it is
   * unavailable; it is advertised either way.
   */
  coreExecute?: SyntheticDelegate;
  /** `memory_recall(query)` delegate. `memory_recall` is advertised only when this is given. */
  memoryRecall?: SyntheticDelegate;
  /** `conversation_lookup(query)` delegate (the conversation log); advertised only when given. */
  conversationLookup?: SyntheticDelegate;
  /**
   * Credentials of the manifest's `"auth": "oauth"` servers (`oauthConnections`): required when it
   * has any. A shared one acts as the deployment; a `"scope": "user"` one as the calling person.
   */
  oauth?: OAuthConnections;
}
