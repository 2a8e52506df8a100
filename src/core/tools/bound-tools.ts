/**
 * The running servers' tools as the surface offers them: each bound to its advertised name
 * (`naming.ts`), classified Natural or Escalate, with the schema the model is shown. Pure: rebuilt
 * whenever a server's tool list changes.
 */
import type { ToolSchema } from "../llm/types.js";
import { classifyTool, effectivePatterns, type ToolClass } from "./classify.js";
import type { Manifest } from "./manifest.js";
import { bindNames, type ToolIdentity } from "./naming.js";
import { normalizeInputSchema } from "./schema-normalize.js";
import type { ToolServer } from "./tool-server.js";

/** One bound MCP tool (`/neo tools`). */
export interface ToolInfo {
  /** The advertised (bound) name, `alias__tool` sanitized. */
  name: string;
  server: string;
  /** The tool's name on its server. */
  tool: string;
  class: ToolClass;
  description: string;
  /** The server's own input schema, unmodified (executors validate arguments against it). */
  inputSchema: Record<string, unknown>;
}

/** A bound tool with the server that runs it and its advertised schema. */
export interface BoundTool extends ToolInfo {
  conn: ToolServer;
  schema: ToolSchema;
}

export interface BoundTools {
  byName: Map<string, BoundTool>;
  /** Natural tools' schemas, sorted by name. */
  natural: ToolSchema[];
  /** Escalate tools' schemas, sorted by name. */
  escalate: ToolSchema[];
}

/**
 * Bind every tool of `conns`. `escalateOverride` (`NEO_ESCALATE_PATTERNS`) replaces the manifest's
 * patterns; a server's own list still wins.
 */
export function bindTools(
  conns: readonly ToolServer[],
  manifest: Manifest,
  escalateOverride: readonly string[] | undefined,
): BoundTools {
  const ids: (ToolIdentity & { conn: ToolServer; index: number })[] = [];
  for (const conn of conns) {
    conn.tools().forEach((t, index) => {
      ids.push({ alias: conn.alias, tool: t.name, conn, index });
    });
  }
  const names = bindNames(ids);
  const byName = new Map<string, BoundTool>();
  for (const [name, id] of names) {
    const { conn, index } = id as (typeof ids)[number];
    const t = conn.tools()[index]!;
    const spec = manifest.servers[conn.alias]!;
    const patterns = effectivePatterns(spec.escalatePatterns, escalateOverride, manifest.escalatePatterns);
    const description = t.description ?? t.title ?? "";
    byName.set(name, {
      name,
      server: conn.alias,
      tool: t.name,
      class: classifyTool(t.name, patterns),
      description,
      inputSchema: t.inputSchema as Record<string, unknown>,
      conn,
      schema: {
        type: "function",
        function: { name, description, parameters: normalizeInputSchema(t.inputSchema) },
      },
    });
  }
  const sorted = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return {
    byName,
    natural: sorted.filter((b) => b.class === "natural").map((b) => b.schema),
    escalate: sorted.filter((b) => b.class === "escalate").map((b) => b.schema),
  };
}
