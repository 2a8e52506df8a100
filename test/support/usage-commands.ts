/** The `/neo usage` / `/neo budget` command deps over a real usage tracker, for the harnesses. */
import type { CommandDeps } from "../../src/core/commands/index.js";
import type { UsageTracker } from "../../src/core/usage/index.js";

export function usageCommands(t: UsageTracker): CommandDeps["usage"] {
  return {
    report: (u) => t.report(u),
    totals: () => t.totals(),
    statusLines: () => t.statusLines(),
    setBudget: (u, usd) => t.setBudget(u, usd),
  };
}

/** For tests that never ask about usage: says so plainly if they do. */
export const NO_USAGE: CommandDeps["usage"] = {
  report: async () => "• (no usage tracked in this test)",
  totals: async () => "• (no usage tracked in this test)",
  statusLines: async () => "• Usage: not tracked in this test",
  setBudget: async () => "Budgets are not tracked in this test.",
};
