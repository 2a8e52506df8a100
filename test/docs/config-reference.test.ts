/**
 * `docs/configuration.md` is generated from the zod schema in src/config.ts; this fails when the
 * committed file is stale (fix: `npm run docs:config`) or a variable has no description.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CONFIG_REFERENCE_PATH, renderConfigReference } from "../../scripts/config-reference.js";
import { envSchema } from "../../src/config.js";

const root = new URL("../../", import.meta.url);

describe("docs/configuration.md", () => {
  it("is what `npm run docs:config` renders from src/config.ts", () => {
    const committed = readFileSync(new URL(CONFIG_REFERENCE_PATH, root), "utf8");
    expect(committed, "docs/configuration.md is stale: run `npm run docs:config`").toBe(
      renderConfigReference(),
    );
  });

  it("documents every variable of the schema, each with a description", () => {
    const text = renderConfigReference();
    for (const name of Object.keys(envSchema.shape)) expect(text).toContain(`| \`${name}\` |`);
  });
});
