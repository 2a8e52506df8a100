/**
 * Advertised names: `alias__tool`, coerced to the OpenAI charset `^[A-Za-z0-9_-]{1,64}$`.
 * Two tools never share a name: every tool whose coerced name is contested, and which is not itself
 * already a valid name, gets a short hash of its original identity. The result depends only on the
 * set of tools, not their order, so it is stable across restarts.
 */
import { createHash } from "node:crypto";

export const MAX_NAME = 64;
export const VALID_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The identity of one MCP tool. */
export interface ToolIdentity {
  alias: string;
  tool: string;
}

/** Coerce a raw name part: strip accents, replace each run of other characters with `_`. */
export function sanitizePart(raw: string): string {
  const ascii = raw.normalize("NFKD").replace(/[\u0300-\u036f]/g, "");
  return ascii.replace(/[^A-Za-z0-9_-]+/g, "_");
}

function hashOf(id: ToolIdentity, length: number): string {
  return createHash("sha256").update(`${id.alias}\u0000${id.tool}`).digest("hex").slice(0, length);
}

/** The name before collision handling: sanitized and truncated. */
export function candidateName(id: ToolIdentity): string {
  let part = sanitizePart(id.tool);
  // A name made only of replaced characters says nothing; its hash at least tells tools apart.
  if (!/[A-Za-z0-9]/.test(part)) part = `tool_${hashOf(id, 6)}`;
  return `${id.alias}__${part}`.slice(0, MAX_NAME);
}

function suffixed(id: ToolIdentity, length: number): string {
  const suffix = `_${hashOf(id, length)}`;
  return candidateName(id).slice(0, MAX_NAME - suffix.length) + suffix;
}

/**
 * Bind every tool to a unique valid advertised name. A tool whose raw `alias__tool` is already valid
 * keeps it; every other member of a contested name gets `_<hash>` (lengthened until unique).
 */
export function bindNames(ids: readonly ToolIdentity[]): Map<string, ToolIdentity> {
  const groups = new Map<string, ToolIdentity[]>();
  for (const id of ids) {
    const c = candidateName(id);
    groups.set(c, [...(groups.get(c) ?? []), id]);
  }
  const bound = new Map<string, ToolIdentity>();
  const pending: ToolIdentity[] = [];
  for (const [name, members] of groups) {
    if (members.length === 1) {
      bound.set(name, members[0]!);
      continue;
    }
    for (const m of members) {
      if (`${m.alias}__${m.tool}` === name) bound.set(name, m);
      else pending.push(m);
    }
  }
  // Sorted so a clash between two hashed names is resolved the same way every time.
  pending.sort((a, b) => (a.alias + a.tool < b.alias + b.tool ? -1 : 1));
  for (const m of pending) {
    let length = 6;
    while (bound.has(suffixed(m, length))) length += 2;
    bound.set(suffixed(m, length), m);
  }
  return bound;
}
