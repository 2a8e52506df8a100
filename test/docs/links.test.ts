/**
 * The README and docs/ stay true to the tree: every relative link points at a file that exists
 * (and at a heading that exists, when it names one), every repository path quoted in backticks
 * exists, every configuration variable named is one `src/config.ts` knows, and every
 * `npm run <script>` is a script of package.json. External links are not fetched (no network in
 * tests); they must at least be well-formed URLs.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { envSchema } from "../../src/config.js";

const root = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Variables the docs may name that are not Neo's settings (read before the config, or by a library;
 * NEO_USER_DIR is the manifest's per-user folder placeholder).
 */
const NOT_CONFIG = new Set(["NEO_ENV_FILE", "SHARDS", "SHARD_COUNT", "HOSTNAME", "NEO_USER_DIR"]);

function docFiles(): string[] {
  const docs = readdirSync(join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => join(root, "docs", f));
  return [join(root, "README.md"), ...docs];
}

/** Markdown without fenced code blocks (links and paths inside code are examples). */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, "");
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchors(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of prose(text).matchAll(/^#{1,6}\s+(.+)$/gm)) {
    const slug = m[1]!
      .trim()
      .toLowerCase()
      .replace(/[`*_]/g, "")
      .replace(/[^\p{L}\p{N}\s-]/gu, "")
      .replace(/\s/g, "-");
    out.add(slug);
  }
  return out;
}

interface Problem {
  file: string;
  what: string;
}

/** Problems in `text`, a Markdown file at `file` (read from disk unless given). */
function check(file: string, text = readFileSync(file, "utf8")): Problem[] {
  const body = prose(text);
  const rel = relative(root, file);
  const problems: Problem[] = [];
  const say = (what: string) => problems.push({ file: rel, what });

  for (const m of body.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1]!;
    if (/^(https?|mailto):/.test(target)) {
      if (!URL.canParse(target)) say(`malformed URL ${target}`);
      continue;
    }
    const [path = "", anchor] = target.split("#");
    const dest = path === "" ? file : resolve(dirname(file), path);
    if (!existsSync(dest)) {
      say(`link to missing ${target}`);
      continue;
    }
    if (anchor && dest.endsWith(".md") && !anchors(readFileSync(dest, "utf8")).has(anchor)) {
      say(`link to missing heading ${target}`);
    }
  }

  for (const m of body.matchAll(/`((?:src|test|bench|scripts|docs|agents|\.ci)\/[^`\s]*)`/g)) {
    const path = m[1]!;
    if (/[*<>{}]/.test(path)) continue; // a pattern, not a path
    if (!existsSync(join(root, path))) say(`names missing path ${path}`);
  }

  const known = new Set(Object.keys(envSchema.shape));
  for (const m of body.matchAll(/\b((?:NEO|SLACK|DISCORD|OPENAI)_[A-Z0-9_]*[A-Z0-9]|REDIS_URL)\b/g)) {
    const name = m[1]!;
    if (!known.has(name) && !NOT_CONFIG.has(name)) say(`names unknown variable ${name}`);
  }

  const scripts = Object.keys(
    (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> })
      .scripts,
  );
  for (const m of text.matchAll(/npm run ([a-z][\w:-]*)/g)) {
    if (!scripts.includes(m[1]!)) say(`names missing npm script ${m[1]}`);
  }
  return problems;
}

describe("README and docs/", () => {
  it("link only to files and headings that exist, and name only real paths, variables and scripts", () => {
    const problems = docFiles().flatMap((f) => check(f));
    expect(problems).toEqual([]);
  });

  it("the checker itself catches a broken link, path, variable and script", () => {
    // A file that would sit in docs/, checked in memory: nothing is written into the tree.
    const probe = join(root, "docs", "probe.md");
    const text =
      "[gone](missing.md) [bad anchor](slack.md#no-such-heading) `src/nowhere.ts` NEO_NO_SUCH_VAR `npm run no-such-script`\n";
    const problems = check(probe, text);
    expect(problems.map((p) => p.what)).toEqual([
      "link to missing missing.md",
      "link to missing heading slack.md#no-such-heading",
      "names missing path src/nowhere.ts",
      "names unknown variable NEO_NO_SUCH_VAR",
      "names missing npm script no-such-script",
    ]);
  });
});
