// Copies the non-TypeScript files that ship inside src/ (embedded prompts) into dist/.
import { cpSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (name.endsWith(".md")) cpSync(path, path.replace(/^src/, "dist"));
  }
}
walk("src");
