/** One section of BENCHMARKS.md, produced by a `bench/<area>.bench.ts` module's `run()`. */
export interface BenchSection {
  title: string;
  markdown: string;
}

/** Median and 99th percentile of a sample (nearest rank). */
export function percentiles(values: readonly number[]): { median: number; p99: number } {
  const s = [...values].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
  return { median: at(0.5), p99: at(0.99) };
}
