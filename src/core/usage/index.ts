/** Usage accounting for operators (`/neo status`) and the optional per-user daily token budget. */
export { createUsageTracker, type UsageTracker, type UsageTrackerOptions } from "./tracker.js";
