/**
 * What a file claims to be, from its declared type and its name: which reader it goes to. The
 * reader then checks the claim (an image by decoding it, in ./read/image.ts; text only when it
 * decodes without NUL bytes).
 */

const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/jpg", "image/gif", "image/webp"]);
const IMAGE_EXT = /\.(png|jpe?g|gif|webp)$/i;

const TEXT_TYPES = new Set([
  "application/json",
  "application/xml",
  "application/x-yaml",
  "application/yaml",
  "application/javascript",
  "application/typescript",
  "application/x-sh",
  "application/sql",
  "application/toml",
  "application/x-ndjson",
]);
const TEXT_EXT =
  /\.(txt|md|markdown|csv|tsv|json|jsonl|ndjson|ya?ml|toml|xml|html?|css|log|ini|cfg|conf|env|sql|sh|bash|zsh|ps1|py|rb|go|rs|java|kt|kts|scala|swift|c|h|cc|cpp|hpp|cs|fs|js|mjs|cjs|jsx|ts|tsx|vue|svelte|php|pl|lua|r|dart|ex|exs|erl|hs|clj|tf|proto|graphql|gql|diff|patch|tex|rst|adoc)$/i;

/** Whether the file is declared (type or name) as an image. */
export function looksLikeImage(type: string, name: string): boolean {
  return IMAGE_TYPES.has(type.toLowerCase()) || IMAGE_EXT.test(name);
}

export function looksLikePdf(type: string, name: string): boolean {
  return type.toLowerCase() === "application/pdf" || /\.pdf$/i.test(name);
}

export function looksLikeText(type: string, name: string): boolean {
  const t = type.toLowerCase();
  return (
    t.startsWith("text/") ||
    TEXT_TYPES.has(t) ||
    t.endsWith("+json") ||
    t.endsWith("+xml") ||
    TEXT_EXT.test(name)
  );
}

/** The bytes as UTF-8 text, or undefined when they are binary (a NUL byte). */
export function decodeText(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  return new TextDecoder("utf-8").decode(bytes).replace(/^\uFEFF/, "");
}
