/**
 * Real-Redis test support. Tests that need Redis call `probeRedis()` at module level and use
 * `describe.skipIf(!redis.ok)`; when no server answers they report skipped with the reason, and
 * under CI=true they fail instead.
 */
import { randomUUID } from "node:crypto";
import { createConnection } from "node:net";
import { inject } from "vitest";

export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

export interface RedisProbe {
  ok: boolean;
  url: string;
  reason: string;
}

export async function probeRedis(url = REDIS_URL): Promise<RedisProbe> {
  const { hostname, port } = new URL(url);
  const ok = await new Promise<boolean>((resolve) => {
    const sock = createConnection({ host: hostname, port: Number(port || 6379) });
    sock.setTimeout(1000);
    sock.once("connect", () => sock.write("PING\r\n"));
    sock.once("data", (d) => {
      sock.destroy();
      resolve(d.toString().startsWith("+PONG"));
    });
    sock.once("timeout", () => {
      sock.destroy();
      resolve(false);
    });
    sock.once("error", () => resolve(false));
  });
  const reason = ok ? "" : `no Redis answered at ${url} (set REDIS_URL or start redis-server)`;
  if (!ok && process.env.CI === "true") throw new Error(`CI=true requires Redis: ${reason}`);
  if (!ok) console.warn(`skipping Redis tests: ${reason}`);
  return { ok, url, reason };
}

/**
 * A key prefix no other test (or run) shares, under the run's prefix (`redis-run.ts`), which is
 * deleted whole when the run ends.
 */
export function uniquePrefix(name: string): string {
  return `${runPrefix()}${name}:${randomUUID().slice(0, 8)}:`;
}

/** The run's prefix under vitest; a benchmark (no vitest run) gets its own and deletes its keys itself. */
function runPrefix(): string {
  return process.env.VITEST ? inject("neoTestRunPrefix") : `neo-test:bench-${randomUUID().slice(0, 8)}:`;
}
