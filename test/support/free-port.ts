/**
 * Ports for the servers a test starts itself (a bot, a redis-server, an MCP server), picked below
 * the kernel's ephemeral range (`net.ipv4.ip_local_port_range`, 32768–60999 by default). A port
 * `listen(0)` hands out comes from that range, and between the check and the server's own bind any
 * outgoing connection (Redis and HTTP clients of the tests running alongside) may take it as its
 * local port: seen under load as a Discord shard that got ready, could not bind, and exited.
 */
import { createServer } from "node:net";

const LOW = 20_000;
const HIGH = 32_000;
const ATTEMPTS = 200;

/** Whether `port` can be bound on 127.0.0.1 right now (bound and closed again). */
export function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}

/** A port free right now, and the `count - 1` after it too (a process per shard adds its id). */
export async function freePort(count = 1): Promise<number> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW - count));
    let free = true;
    for (let i = 0; i < count && free; i++) free = await portFree(port + i);
    if (free) return port;
  }
  throw new Error(`no ${count} free port(s) in a row between ${LOW} and ${HIGH} after ${ATTEMPTS} tries`);
}
