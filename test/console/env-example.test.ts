import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { envSchema, loadConfig } from "../../src/config.js";

const example = readFileSync(new URL("../../.env.example", import.meta.url), "utf8");
const entries = new Map(
  example
    .split("\n")
    .filter((l) => /^[A-Z][A-Z0-9_]*=/.test(l))
    .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)] as const),
);

describe(".env.example", () => {
  it("lists every variable of src/config.ts, and nothing else", () => {
    expect([...entries.keys()].sort()).toEqual(Object.keys(envSchema.shape).sort());
  });

  it("gives each variable its real default (loading the file as is equals loading nothing)", () => {
    expect(loadConfig(Object.fromEntries(entries))).toEqual(loadConfig({}));
  });
});
