import { describe, expect, it } from "vitest";
import { estimateTokens } from "../../src/core/budget/estimate.js";
import { highEntropyTokens, tokensByRecency } from "../../src/core/compaction/entropy.js";
import {
  keepTrustContract,
  movedOutLine,
  PRESERVED_HEADING,
  splitSummary,
} from "../../src/core/compaction/preserved.js";

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

  it("finds short git SHAs, e-mail addresses, file names with an extension and URLs of any scheme", () => {
    const text = [
      "Fixed in 3f9a2c1 (and a1b2c3d4e5f6 on the release branch); the decade ended, deadbeef stays a word.",
      "Mail ann.lee+neo@example.co.uk or ops@corp-mail.io about report-2026.pdf and build.tar.gz.",
      "Pinned at ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi and wss://node.example.net/ws.",
      "Short words e.g. i.e. and a.b are not file names; version 1.2.3 is not either.",
    ].join("\n");
    expect(highEntropyTokens(text)).toEqual([
      "3f9a2c1",
      "a1b2c3d4e5f6",
      "ann.lee+neo@example.co.uk",
      "ops@corp-mail.io",
      "report-2026.pdf",
      "build.tar.gz",
      "ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi",
      "wss://node.example.net/ws",
    ]);
  });

  it("orders tokens by their last appearance", () => {
    expect(tokensByRecency("A 0xaaaaaaaaaa, B 0xbbbbbbbbbb, A again 0xaaaaaaaaaa")).toEqual([
      "0xbbbbbbbbbb",
      "0xaaaaaaaaaa",
    ]);
  });
});

describe("the bounded preserved list", () => {
  const ids = (n: number, from = 0) =>
    Array.from({ length: n }, (_, i) => `0x${(from + i).toString(16).padStart(64, "0")}`);

  it("carries only what the written summary dropped, newest first, deduplicated", () => {
    const out = keepTrustContract({
      body: "GOAL: pay\nARTIFACTS: 0xdeadbeef00112233",
      previous: null,
      compacted:
        "paid 0xdeadbeef00112233 to https://pay.example.org/r/42, see invoice-7.pdf; again https://pay.example.org/r/42",
      budgetTokens: 1000,
    });
    expect(out.summary).toBe(
      `GOAL: pay\nARTIFACTS: 0xdeadbeef00112233\n${PRESERVED_HEADING}\n- https://pay.example.org/r/42\n- invoice-7.pdf`,
    );
    expect(out.movedOut).toEqual([]);
  });

  it("keeps within its budget, moves the oldest out, and counts what moved out across compactions", () => {
    const first = keepTrustContract({
      body: "GOAL: g",
      previous: null,
      compacted: ids(50).join(" "),
      budgetTokens: 800,
    });
    expect(estimateTokens(first.summary)).toBeLessThanOrEqual(800 + estimateTokens("GOAL: g"));
    expect(first.preserved[0]).toBe(ids(50)[49]); // newest first
    expect(first.movedOut.length).toBeGreaterThan(0);
    expect(first.preserved.length + first.movedOut.length).toBe(50);
    expect(first.summary.split("\n").at(-1)).toBe(movedOutLine(first.movedOut.length, first.movedOut.length));

    const previous = `[compaction 1: soft]\n${first.summary}`;
    const second = keepTrustContract({
      body: "GOAL: g",
      previous,
      compacted: ids(10, 100).join(" "),
      budgetTokens: 800,
    });
    // The ten new ones lead; the previous list's newest follow; the total moved out grows.
    expect(second.preserved.slice(0, 11)).toEqual([...ids(10, 100).reverse(), ids(50)[49]]);
    const parts = splitSummary(`[compaction 2: soft]\n${second.summary}`);
    expect(parts).toEqual({
      body: "GOAL: g",
      preserved: second.preserved,
      movedOut: first.movedOut.length + second.movedOut.length,
    });
  });
});
