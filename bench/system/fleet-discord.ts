/**
 * The fleet bench's Discord side (fleet.ts): one bot in 3 shards, as docs/discord.md runs it — each
 * process gets its shard group in discord.js's variables (`SHARDS=[k]`, `SHARD_COUNT=3`; the
 * 1-process row runs `SHARDS=[0,1,2]`) and otherwise one set of variables for all: the process adds
 * its first shard id to NEO_HTTP_PORT and the metrics port and `-shard-<k>` to NEO_INSTANCE_ID.
 *
 * The fake Discord (test/fakes/discord/) serves GUILDS guilds on successive shards
 * ((guild_id >> 22) % 3), the channels spread over them, and every bench user a member of each. It
 * answers 429 beyond Discord's global limit (50 requests in any second per bot, every shard's
 * requests together) and beyond the per-route limits with their X-RateLimit-* headers on every
 * answer (route-limits.ts: 5 message writes per 5 s per channel, …), and records every call. A
 * mention is a MESSAGE_CREATE on the gateway to the session of its guild's shard; like Discord, one
 * sent while that shard is down is never dispatched (Neo catches up over REST when the shard is back).
 */
import { startFakeDiscord } from "../../test/fakes/discord/fake-discord.js";
import { type ChannelPayload, type FakeUser, user } from "../../test/fakes/discord/payloads.js";
import type { FleetPlatformFactory } from "./fleet.js";
import { answeredTokens } from "./ledger.js";
import { question } from "./model.js";
import { observeDiscord } from "./observe.js";
import { freePortRun } from "./procs.js";

export const SHARD_COUNT = 3;
/** Two guilds per shard. */
export const GUILDS = 2 * SHARD_COUNT;

export const createDiscordFleet: FleetPlatformFactory = async (spec, ledger) => {
  if (spec.instances !== 1 && spec.instances !== SHARD_COUNT)
    throw new Error(`bench:fleet: Discord runs 1 process or ${SHARD_COUNT} (a shard each)`);
  if (spec.users < GUILDS)
    throw new Error(`bench:fleet: Discord needs at least ${GUILDS} users (one guild each)`);
  const discord = await startFakeDiscord({ routeLimits: true });
  // Channel k is in guild k % GUILDS: messages sent round the channels go round the shards.
  const perGuild = Array.from({ length: GUILDS }, (_, g) =>
    discord.addGuild(Math.floor((spec.channels + GUILDS - 1 - g) / GUILDS)),
  );
  const channels: ChannelPayload[] = Array.from(
    { length: spec.channels },
    (_, k) => perGuild[k % GUILDS]!.channels[Math.floor(k / GUILDS)]!,
  );
  const users: FakeUser[] = Array.from({ length: spec.users }, (_, i) => {
    const u = user(`fleet${i}`, { globalName: `Fleet ${i}` });
    discord.addMember(u);
    return u;
  });
  observeDiscord(discord, ledger);
  const shardsOf = (i: number) =>
    spec.instances === 1 ? Array.from({ length: SHARD_COUNT }, (_, s) => s) : [i];
  // Each process adds its first shard id to both: room for every shard from each base.
  const httpBase = await freePortRun(SHARD_COUNT);
  const metricsBase = await freePortRun(SHARD_COUNT);
  const identified = (shard: number) =>
    discord.gateway.identifies.filter((id) => id.shard?.[0] === shard).length;

  return {
    env: (i) => ({
      DISCORD_TOKEN: discord.token,
      DISCORD_API_URL: discord.apiBase,
      SHARDS: JSON.stringify(shardsOf(i)),
      SHARD_COUNT: String(SHARD_COUNT),
      NEO_HTTP_PORT: String(httpBase),
      NEO_METRICS_PORT: String(metricsBase),
      NEO_INSTANCE_ID: `fleet-${spec.prefix}`,
    }),
    healthPort: (i) => httpBase + shardsOf(i)[0]!,
    connected(i) {
      const before = shardsOf(i).map(identified);
      return () => shardsOf(i).every((s, j) => identified(s) > before[j]!);
    },
    // Neo's user key is per guild (discord:<guild>:<user>), so is the turn bucket: a person talks in
    // the channels of one guild (user u in guild u % GUILDS), all of their messages on one bucket.
    userFor(k, channel) {
      const g = channel % GUILDS;
      const inGuild = Math.floor((spec.users - 1 - g) / GUILDS) + 1;
      return g + GUILDS * (Math.floor(k / GUILDS) % inGuild);
    },
    async mention(token, channel, u) {
      const ch = channels[channel]!;
      ledger.send(token, "discord", `discord:${ch.id}`);
      await discord.say(users[u]!, ch, question(token), { mentionBot: true });
    },
    judge(prefix) {
      const overLimit: Record<string, number> = {};
      const windows = new Set<string>();
      for (const c of discord.globalRefusals()) {
        overLimit.global = (overLimit.global ?? 0) + 1;
        windows.add(`global ${Math.floor(c.arrived / 1000)}`);
      }
      for (const r of discord.routeRefusals()) {
        const bucket = r.key.split(":")[0]!;
        overLimit[bucket] = (overLimit[bucket] ?? 0) + 1;
        windows.add(`${r.key} ${r.windowStart}`);
      }
      const calls: Record<string, number> = {};
      const together = new Set<string>();
      for (const c of discord.calls) {
        const key = `${c.method} ${c.path.replace(/\d{6,}/g, "#")} ${c.status}`;
        calls[key] = (calls[key] ?? 0) + 1;
        const content = (c.body as { content?: unknown } | null)?.content;
        if (c.status >= 300 || typeof content !== "string") continue;
        const found = answeredTokens(content);
        if (new Set(found).size > 1) for (const t of found) if (t.startsWith(`${prefix}m`)) together.add(t);
      }
      return {
        overLimit,
        windowsOver: windows.size,
        note: `the fleet's busiest second at the fake: ${discord.busiestGlobalWindow()} requests (Discord's global limit: 50)`,
        answeredTogether: together.size,
        calls,
      };
    },
    close: () => discord.close(),
  };
};
