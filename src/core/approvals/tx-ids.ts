/**
 * Find transaction ids in tool results, verbatim. JSON results are searched by key
 * (txId, tx_id, txHash, transactionId, signature, ...); text results by `tx...: <id>` phrases and
 * 0x-prefixed 32-byte hashes. Never reformatted: the model must quote them exactly.
 */

const TX_KEYS = new Set(["txid", "txhash", "transactionid", "transactionhash", "signature", "tx", "hash"]);

function norm(key: string): string {
  return key.toLowerCase().replace(/[^a-z0-9]/g, "");
}

function fromJson(value: unknown, out: string[]): void {
  if (Array.isArray(value)) {
    for (const v of value) fromJson(v, out);
    return;
  }
  if (typeof value !== "object" || value === null) return;
  for (const [k, v] of Object.entries(value)) {
    if (TX_KEYS.has(norm(k)) && (typeof v === "string" || typeof v === "number")) out.push(String(v));
    else fromJson(v, out);
  }
}

const TEXT_PATTERNS = [
  // "tx 0xabc1", "txid: abc123", "transaction hash = 5f2..."; the id must contain a digit so that
  // words ("transaction failed") are never taken for ids.
  /\b(?:tx|transaction)[ _-]?(?:id|hash)?\s*[:=#]?\s*["']?((?=[A-Za-z_-]*\d)[A-Za-z0-9][A-Za-z0-9_-]{5,})/gi,
  /\b(0x[0-9a-fA-F]{64})\b/g,
];

function fromText(text: string, out: string[]): void {
  for (const re of TEXT_PATTERNS) for (const m of text.matchAll(re)) out.push(m[1]!);
}

/** Transaction ids in one result, in order of appearance, without duplicates. */
export function extractTxIds(content: string): string[] {
  const out: string[] = [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed === "object" && parsed !== null) fromJson(parsed, out);
  else fromText(content, out);
  return [...new Set(out)];
}
