/**
 * The compaction marker. Every summary a compaction produces starts with this line, so the system
 * block of each request says which compaction window it belongs to. The transcript that follows a
 * compaction no longer extends the previous request; the marker is how the scripted endpoint (and a
 * human reading a request log) tells a legitimate compaction from a corrupted transcript.
 */

const MARKER_RE = /\[compaction (\d+): ([a-z]+)\]/;

/** The first line of the summary written by compaction number `n` (1-based). */
export function compactionMarker(n: number, reason: string): string {
  return `[compaction ${n}: ${reason}]`;
}

/** The compaction number announced in a system block or summary; 0 when there is none. */
export function compactionNumber(text: string | null | undefined): number {
  const m = text ? MARKER_RE.exec(text) : null;
  return m ? Number(m[1]) : 0;
}
