/**
 * Each process's instance id and ports (src/app/process-place.ts): defaults that never collide
 * between processes on one host, whether they set `NEO_HTTP_PORT` apart or run under discord.js's
 * `ShardingManager` (which sets `SHARDS` and `SHARD_COUNT` and nothing else of ours).
 */
import { describe, expect, it } from "vitest";
import { processPlaceOf } from "../../src/app/process-place.js";
import { loadConfig } from "../../src/config.js";

const place = (env: Record<string, string>) => processPlaceOf(loadConfig(env), { HOSTNAME: "box", ...env });

describe("a process's place among the processes of one host", () => {
  it("by default: HTTP on 3000, /metrics on 9464, the host name as instance id", () => {
    expect(place({})).toEqual({ instanceId: "box", httpPort: 3000, metricsPort: 9464 });
  });

  it("/metrics follows NEO_HTTP_PORT, so processes set apart by their HTTP port never share it", () => {
    const ports = ["3000", "3001", "3002"].map((p) => place({ NEO_HTTP_PORT: p }).metricsPort);
    expect(ports).toEqual([9464, 9465, 9466]);
    expect(place({ NEO_HTTP_PORT: "0" }).metricsPort).toBe(0);
    expect(place({ NEO_HTTP_PORT: "3000", NEO_METRICS_PORT: "9100" }).metricsPort).toBe(9100);
  });

  it("under ShardingManager every shard process gets its own ports and instance id from one environment", () => {
    const shards = [0, 1, 2].map((k) => place({ SHARDS: String(k), SHARD_COUNT: "3" }));
    expect(shards).toEqual([
      { instanceId: "box-shard-0", httpPort: 3000, metricsPort: 9464, shard: 0 },
      { instanceId: "box-shard-1", httpPort: 3001, metricsPort: 9465, shard: 1 },
      { instanceId: "box-shard-2", httpPort: 3002, metricsPort: 9466, shard: 2 },
    ]);
    // Shard groups set by hand (docs/discord.md): the first id of each group.
    expect(place({ SHARDS: "[2,3]", SHARD_COUNT: "4", NEO_INSTANCE_ID: "n" })).toEqual({
      instanceId: "n-shard-2",
      httpPort: 3002,
      metricsPort: 9466,
      shard: 2,
    });
    expect(place({ SHARDS: "1", NEO_HTTP_PORT: "0" })).toMatchObject({ httpPort: 0, metricsPort: 0 });
  });

  it("says which variable to change when a port would not exist, or SHARDS cannot be read", () => {
    expect(() => place({ NEO_HTTP_PORT: "60000" })).toThrow(
      /^NEO_METRICS_PORT: 66464 is past 65535 \(unset, it is NEO_HTTP_PORT \+ 6464\); set it$/,
    );
    expect(() => place({ SHARDS: "shard one" })).toThrow(/^SHARDS: must be a shard id/);
    expect(() => place({ SHARDS: "[]" })).toThrow(/^SHARDS: must be a shard id/);
  });
});
