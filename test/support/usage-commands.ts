/** The usage and channel command deps over the real services, for the harnesses. */
import { type ChannelSettingsStore, DEFAULT_CHANNEL_SETTINGS } from "../../src/core/channels/index.js";
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

/** The `/neo channel` command deps over real channel settings; every model is allowed. */
export function channelCommands(c: ChannelSettingsStore): CommandDeps["channels"] {
  return {
    get: (ref) => c.get(ref),
    change: (ref, change) => c.change(ref, change),
    list: () => c.list(),
    modelProblem: () => undefined,
  };
}

/** For tests that never set channel settings: every channel has the defaults. */
export const NO_CHANNELS: CommandDeps["channels"] = {
  get: async () => ({ ...DEFAULT_CHANNEL_SETTINGS }),
  change: async () => {
    throw new Error("channel settings are not kept in this test");
  },
  list: async () => [],
  modelProblem: () => undefined,
};
