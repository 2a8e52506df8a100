// The layering of DESIGN.md (Layout), checked from the imports: run by `npm run check`.
// Each layer names the layers it may import; an import that points anywhere else fails the check
// with the file, the line and the rule. `node scripts/check-layers.mjs [root]`.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

/** Layer of a path under src/: its first folder, or the file's own name for top-level files. */
const MAY_IMPORT = {
  store: [],
  ops: [],
  config: [],
  core: ["store", "ops", "config"],
  memory: ["core", "store", "ops", "config"],
  adapters: ["core", "store", "ops", "config"],
  app: ["core", "memory", "adapters", "store", "ops", "config"],
  main: ["app", "core", "memory", "adapters", "store", "ops", "config"],
};

const root = resolve(process.argv[2] ?? ".");
const src = join(root, "src");

function layerOf(file) {
  const [first] = relative(src, file).split(sep);
  return first.replace(/\.(ts|js)$/, "");
}

function* sources(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sources(path);
    else if (name.endsWith(".ts")) yield path;
  }
}

// Static imports and exports, and dynamic import() of a string literal.
const IMPORT =
  /(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

const problems = [];
for (const file of sources(src)) {
  const layer = layerOf(file);
  const allowed = MAY_IMPORT[layer];
  if (!allowed) {
    problems.push(`${relative(root, file)}: "${layer}" is not a layer of DESIGN.md's Layout`);
    continue;
  }
  const text = readFileSync(file, "utf8");
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2];
    if (!spec.startsWith(".")) continue;
    const target = resolve(dirname(file), spec);
    if (!target.startsWith(src + sep)) continue;
    const to = layerOf(target);
    if (to === layer || allowed.includes(to)) continue;
    const line = text.slice(0, m.index + m[0].lastIndexOf(spec)).split("\n").length;
    problems.push(`${relative(root, file)}:${line}: ${layer} may not import ${to} ("${spec}")`);
  }
}

if (problems.length > 0) {
  console.error(`Layering (DESIGN.md, Layout): ${problems.length} import(s) point the wrong way:`);
  for (const p of problems) console.error(`  ${p}`);
  process.exit(1);
}
