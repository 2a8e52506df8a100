/** The markers around the system suite's block in BENCHMARKS.md (kept by `npm run bench`). */
export const BLOCK_START = "<!-- bench:system:start -->";
export const BLOCK_END = "<!-- bench:system:end -->";
