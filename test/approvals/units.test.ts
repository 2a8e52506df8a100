/** Pure pieces: decimal money, the JSON-schema subset, spend and tx-id extraction, admin check. */
import { describe, expect, it } from "vitest";
import { createAdminCheck } from "../../src/core/access/admin.js";
import { addDecimal, compareDecimal, DecimalError, toDecimal } from "../../src/core/approvals/decimal.js";
import { validateJsonSchema } from "../../src/core/approvals/json-schema.js";
import { extractSpend, UNSPECIFIED_ASSET } from "../../src/core/approvals/spend.js";
import { extractTxIds } from "../../src/core/approvals/tx-ids.js";

describe("decimal money", () => {
  it("adds and compares exactly, without float error", () => {
    expect(addDecimal("0.1", "0.2")).toBe("0.3");
    expect(addDecimal("999999999999999999.99", "0.01")).toBe("1000000000000000000");
    expect(compareDecimal("3", "3.000")).toBe(0);
    expect(compareDecimal("2.5", "10")).toBe(-1);
    expect(toDecimal(1e-7)).toBe("0.0000001");
    expect(toDecimal("007.50")).toBe("7.5");
  });
  it("refuses what is not a non-negative decimal", () => {
    for (const bad of ["-1", "1e3", "abc", "", "1.2.3"]) expect(() => toDecimal(bad)).toThrow(DecimalError);
    expect(() => toDecimal(Number.NaN)).toThrow(DecimalError);
    expect(() => toDecimal({})).toThrow(DecimalError);
  });
});

describe("tool arguments against the tool's JSON schema (ajv)", () => {
  const schema = {
    type: "object",
    properties: {
      to: { type: "string", minLength: 1 },
      amount: { type: "string", pattern: "^\\d+(\\.\\d+)?$" },
      asset: { type: "string", enum: ["USDC", "ETH"] },
      memo: { type: ["string", "null"] },
      legs: { type: "array", items: { type: "integer", minimum: 1 } },
    },
    required: ["to", "amount", "asset"],
    additionalProperties: false,
  };
  it("accepts valid arguments", () => {
    expect(
      validateJsonSchema(schema, { to: "0xabc", amount: "5", asset: "USDC", memo: null, legs: [1, 2] }),
    ).toEqual([]);
  });
  it("names every problem with its path", () => {
    const errors = validateJsonSchema(schema, { to: "", amount: 5, asset: "DOGE", extra: 1, legs: [0, 1.5] });
    expect([...errors].sort()).toEqual([
      "arguments.amount: must be string",
      'arguments.asset: must be one of ["USDC","ETH"]',
      "arguments.extra: is not an allowed property",
      "arguments.legs[0]: must be >= 1",
      "arguments.legs[1]: must be integer",
      "arguments.to: must NOT have fewer than 1 characters",
    ]);
    expect(validateJsonSchema(schema, {})).toEqual([
      "arguments.to: is required",
      "arguments.amount: is required",
      "arguments.asset: is required",
    ]);
  });
  it("handles anyOf and oneOf, saying what each branch wanted", () => {
    const s = { anyOf: [{ type: "string" }, { type: "number" }] };
    expect(validateJsonSchema(s, "x")).toEqual([]);
    expect(validateJsonSchema(s, true)).toEqual([
      "arguments: must be string",
      "arguments: must be number",
      "arguments: must match a schema in anyOf",
    ]);
    const one = { oneOf: [{ type: "integer" }, { type: "number" }] };
    expect(validateJsonSchema(one, 1.5)).toEqual([]);
    expect(validateJsonSchema(one, 2)).toEqual(["arguments: must match exactly one schema in oneOf"]);
  });
  it("checks the standard formats MCP tools use, and ignores keywords and formats it does not know", () => {
    const s = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: { url: { type: "string", format: "uri" }, id: { type: "string", format: "x-vendor-id" } },
      "x-vendor": true,
    };
    expect(validateJsonSchema(s, { url: "https://example.com/a", id: "anything" })).toEqual([]);
    expect(validateJsonSchema(s, { url: "not a uri" })).toEqual(['arguments.url: must match format "uri"']);
  });
  it("reports a schema it cannot compile as an error instead of passing the arguments", () => {
    const broken = { type: "object", properties: { a: { $ref: "#/definitions/missing" } } };
    const errors = validateJsonSchema(broken, { a: 1 });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^arguments: the tool's schema cannot be used to check them/);
  });
});

describe("spend extraction", () => {
  it("reads amount, asset and recipient from common argument names", () => {
    expect(extractSpend({ to: "0xabc", amount: "5", asset: "usdc" })).toEqual({
      amount: "5",
      asset: "USDC",
      recipient: "0xabc",
    });
    expect(extractSpend({ quantity: 2, token: "ETH", recipient_address: "x", address: "0xdef" })).toEqual({
      amount: "2",
      asset: "ETH",
      recipient: "0xdef",
    });
    expect(extractSpend({ value: "1.50", currency: "EUR" })).toEqual({
      amount: "1.5",
      asset: "EUR",
      recipient: null,
    });
    expect(extractSpend({ amount: "3" })).toMatchObject({ asset: UNSPECIFIED_ASSET });
    expect(extractSpend({ name: "hello" })).toBeNull();
  });
  it("refuses an amount that is not a decimal rather than guessing", () => {
    expect(() => extractSpend({ amount: "five", asset: "USDC" })).toThrow(DecimalError);
  });
});

describe("tx id extraction", () => {
  const hash = `0x${"ab".repeat(32)}`;
  it("finds ids verbatim in text and JSON", () => {
    expect(extractTxIds(`sent 5 USDC to 0xabc: tx ${hash}`)).toEqual([hash]);
    expect(extractTxIds("txid: 5f2a9c1e77")).toEqual(["5f2a9c1e77"]);
    expect(extractTxIds(JSON.stringify({ result: { txHash: "AbC123xyz" } }))).toEqual(["AbC123xyz"]);
    expect(extractTxIds("transaction failed: insufficient funds")).toEqual([]);
  });
});

describe("admin check", () => {
  const isAdmin = createAdminCheck(["discord:g1:111", "222", "slack:U333"]);
  it("matches full keys, platform:user and bare ids, plus the platform's own word", () => {
    expect(isAdmin("discord:g1:111")).toBe(true);
    expect(isAdmin("discord:g2:111")).toBe(false);
    expect(isAdmin("slack:T1:222")).toBe(true);
    expect(isAdmin("slack:T9:U333")).toBe(true);
    expect(isAdmin("discord:g1:U333")).toBe(false);
    expect(isAdmin("console:local:nobody")).toBe(false);
    expect(isAdmin("console:local:nobody", true)).toBe(true);
    expect(isAdmin("not-a-key")).toBe(false);
  });
});
