/**
 * Natural vs Escalate. Escalate tools move or commit funds (or need a signature): they are never
 * advertised and are reached only through `core_execute`. Reads and dry-runs stay Natural.
 */

export type ToolClass = "natural" | "escalate";

/** The seed's defaults: case-insensitive substrings of the MCP tool name. */
export const DEFAULT_ESCALATE_PATTERNS: readonly string[] = [
  "send",
  "transfer",
  "swap",
  "approve",
  "deploy",
  "settle",
  "fund",
  "mint",
  "withdraw",
  "stake",
  "invoke",
  "bridge",
];

/** Classify one MCP tool name (not the advertised name: the alias must not make a tool Escalate). */
export function classifyTool(toolName: string, patterns: readonly string[]): ToolClass {
  const lower = toolName.toLowerCase();
  return patterns.some((p) => lower.includes(p.toLowerCase())) ? "escalate" : "natural";
}

/**
 * Which pattern list applies, most specific first: the server's own list, then the explicit override
 * (`NEO_ESCALATE_PATTERNS`), then the manifest's list, then the defaults.
 */
export function effectivePatterns(
  server: readonly string[] | undefined,
  override: readonly string[] | undefined,
  manifest: readonly string[] | undefined,
): readonly string[] {
  return server ?? override ?? manifest ?? DEFAULT_ESCALATE_PATTERNS;
}
