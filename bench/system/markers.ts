/** The markers around the system suite's block in BENCHMARKS.md (kept by `npm run bench`). */
export const BLOCK_START = "<!-- bench:system:start -->";
export const BLOCK_END = "<!-- bench:system:end -->";
/** The fleet bench's block (`npm run bench:fleet`), kept by `npm run bench` and `npm run bench:system`. */
export const FLEET_START = "<!-- bench:fleet:start -->";
export const FLEET_END = "<!-- bench:fleet:end -->";
