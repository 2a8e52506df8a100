import { describe, expect, it } from "vitest";
import { highEntropyTokens, PRESERVED_HEADING, validateSummary } from "../../src/core/compaction/entropy.js";

describe("high-entropy tokens (the trust contract)", () => {
  it("finds ids, hex addresses, tx hashes, URLs, paths, UUIDs, ULIDs and long numbers, verbatim", () => {
    const tx = `0x${"ab12".repeat(16)}`;
    const text = [
      `Sent from 0x52908400098527886E0F7030069857D2E4169EE7 in ${tx}.`,
      "Docs: https://docs.example.com/v2/agents?id=7#top, then /var/lib/neo/data/cortex.json.",
      "Order ord_8f3k2x9q, request 550e8400-e29b-41d4-a716-446655440000, event 01ARZ3NDEKTSV4RRFFQ69G5FAV.",
      "Block 19000123 of the chain; plain words like approval or 2026 are not identifiers.",
    ].join("\n");
    expect(highEntropyTokens(text)).toEqual([
      "0x52908400098527886E0F7030069857D2E4169EE7",
      tx,
      "https://docs.example.com/v2/agents?id=7#top",
      "/var/lib/neo/data/cortex.json",
      "ord_8f3k2x9q",
      "550e8400-e29b-41d4-a716-446655440000",
      "01ARZ3NDEKTSV4RRFFQ69G5FAV",
      "19000123",
    ]);
  });

  it("appends only what the summary dropped, under the preserved heading", () => {
    const history = "paid 0xdeadbeef00112233 to https://pay.example.org/r/42";
    const kept = validateSummary("GOAL: pay\nARTIFACTS: 0xdeadbeef00112233", history);
    expect(kept.restored).toEqual(["https://pay.example.org/r/42"]);
    expect(kept.summary).toBe(
      `GOAL: pay\nARTIFACTS: 0xdeadbeef00112233\n${PRESERVED_HEADING}\n- https://pay.example.org/r/42`,
    );
    expect(
      validateSummary("GOAL: x 0xdeadbeef00112233 https://pay.example.org/r/42", history).restored,
    ).toEqual([]);
  });
});
