// `node:fs` plus the `globSync` Node 22 added: @modelcontextprotocol/conformance 0.1.16 imports
// it at load (only its `tier-check` command calls it, as `globSync("**/checks.json", { cwd })`).
// Only that pattern shape (`**/<file name>`) is implemented; anything else throws, naming why.
import fs from "node:fs";
import { basename, join } from "node:path";

export * from "node:fs";
export default fs;

export function globSync(pattern, options = {}) {
  const match = /^\*\*\/([^*?[\]{}/]+)$/.exec(pattern);
  if (!match)
    throw new Error(`globSync("${pattern}") needs Node 22; this Node 20 shim only does "**/<name>"`);
  const cwd = options.cwd ?? process.cwd();
  return fs
    .readdirSync(cwd, { recursive: true })
    .map(String)
    .filter((p) => basename(p) === match[1])
    .map((p) => (options.cwd ? p : join(cwd, p)));
}
