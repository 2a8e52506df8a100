/**
 * Small pieces both platforms use to make content readable for the model: dates as ISO UTC text,
 * sizes in words, and the line describing a file Neo does not read.
 */

/** `1392734382` → `2014-02-18T14:39:42Z` (to the second: the platforms' dates are in seconds). */
export function isoOf(unixSeconds: number): string {
  return new Date(Math.floor(unixSeconds) * 1000).toISOString().replace(/\.000Z$/, "Z");
}

const KB = 1024;
/** `12345` → `12 KB`. */
export function sizeText(bytes: number): string {
  if (bytes < KB) return `${bytes} B`;
  if (bytes < KB * KB) return `${Math.round(bytes / KB)} KB`;
  return `${(bytes / (KB * KB)).toFixed(1)} MB`;
}

/** `[attached: report.csv, text/csv, 12 KB]`: a file described, not read (unknown parts left out). */
export function attachedLine(name: string, type?: string | null, size?: number | null): string {
  return `[attached: ${[name, type, typeof size === "number" ? sizeText(size) : undefined].filter(Boolean).join(", ")}]`;
}
