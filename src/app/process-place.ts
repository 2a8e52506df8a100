/**
 * Where this process stands among the fleet's processes on one host: its instance id and its two
 * ports. Defaults never collide (DESIGN.md, Fleet), so any number of processes start on one host
 * with only `NEO_HTTP_PORT` and `NEO_INSTANCE_ID` set apart, or with nothing set apart under
 * discord.js's `ShardingManager`:
 *
 * - `/metrics` listens on `NEO_METRICS_PORT`, unset = `NEO_HTTP_PORT + 6464` (3000 → 9464, the
 *   port it always had; 3001 → 9465), so it follows the port an operator already sets apart.
 * - With `SHARDS` in the environment (ShardingManager sets it for each shard process; an operator
 *   may set it per process), the process adds its first shard id to both ports and `-shard-<id>`
 *   to its instance id: one set of variables serves every shard, each shard's id is stable across
 *   its restarts, and shard k's metrics are on `9464 + k`.
 * Port 0 (the system picks one; tests) stays 0; the bound ports are in the "neo started" line.
 */
import { hostname } from "node:os";
import { type Config, ConfigError } from "../config.js";

/** `/metrics`'s default distance from `NEO_HTTP_PORT`: 3000 → 9464, Prometheus exporters' port. */
export const METRICS_PORT_OFFSET = 6464;

export interface ProcessPlace {
  instanceId: string;
  /** `/healthz` and Slack's HTTP receiver. */
  httpPort: number;
  /** `/metrics`, on its own server. */
  metricsPort: number;
  /** The first shard id this process runs (discord.js `SHARDS`), when sharded. */
  shard?: number;
}

/** The first shard id in discord.js's `SHARDS` (a JSON number or array), or undefined. */
export function firstShardOf(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env.SHARDS;
  if (raw === undefined || raw === "") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError(`SHARDS: must be a shard id or a JSON array of them, e.g. [0,1] (got "${raw}")`);
  }
  const ids = (Array.isArray(parsed) ? parsed : [parsed]).filter(
    (v): v is number => typeof v === "number" && Number.isInteger(v) && v >= 0,
  );
  if (ids.length === 0)
    throw new ConfigError(`SHARDS: must be a shard id or a JSON array of them, e.g. [0,1] (got "${raw}")`);
  return Math.min(...ids);
}

export function processPlaceOf(
  cfg: Pick<Config, "NEO_INSTANCE_ID" | "NEO_HTTP_PORT" | "NEO_METRICS_PORT">,
  env: NodeJS.ProcessEnv = process.env,
): ProcessPlace {
  const shard = firstShardOf(env);
  const offset = shard ?? 0;
  const shifted = (port: number) => (port === 0 ? 0 : port + offset);
  const httpPort = shifted(cfg.NEO_HTTP_PORT);
  const metricsPort =
    cfg.NEO_METRICS_PORT !== undefined
      ? shifted(cfg.NEO_METRICS_PORT)
      : httpPort === 0
        ? 0
        : httpPort + METRICS_PORT_OFFSET;
  const where = shard === undefined ? "" : ` for shard ${shard}`;
  if (httpPort > 65_535)
    throw new ConfigError(`NEO_HTTP_PORT: ${httpPort}${where} is past 65535; set it lower`);
  if (metricsPort > 65_535)
    throw new ConfigError(
      `NEO_METRICS_PORT: ${metricsPort}${where} is past 65535${cfg.NEO_METRICS_PORT === undefined ? ` (unset, it is NEO_HTTP_PORT + ${METRICS_PORT_OFFSET})` : ""}; set it`,
    );
  const base = cfg.NEO_INSTANCE_ID ?? (env.HOSTNAME || hostname());
  return {
    instanceId: shard === undefined ? base : `${base}-shard-${shard}`,
    httpPort,
    metricsPort,
    ...(shard === undefined ? {} : { shard }),
  };
}
