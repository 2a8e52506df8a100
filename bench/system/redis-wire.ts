/**
 * A TCP pass-through in front of the bench's redis-server that counts what the bot asks of it.
 * The bot talks RESP to this proxy (its REDIS_URL), the proxy to Redis. Every chunk the client
 * writes is one round trip's request (node-redis writes the commands queued in one tick as one
 * pipeline, so a chunk is what the bot sent without waiting for an answer in between); the RESP
 * arrays inside it are the commands. Each chunk is stamped with the ledger's clock, so a run can
 * count the round trips and commands that fall between two moments of one message.
 */
import { writeFileSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { now } from "./ledger.js";

export interface WireChunk {
  at: number;
  commands: number;
  /** The command names in it, each with its first argument (`GET(key)`): what it was about. */
  names: string;
}

export interface RedisWire {
  url: string;
  chunks: WireChunk[];
  /** Round trips and commands sent in [from, to). */
  between(from: number, to: number): { roundTrips: number; commands: number };
  close(): Promise<void>;
}

/** Counts the RESP arrays (commands) a client sends, across chunk boundaries. */
function createCommandCounter(): (chunk: Buffer) => number {
  let pending: Buffer = Buffer.alloc(0);
  /** Bulk strings still to read in the current command, and bytes still to skip in the current one. */
  let argsLeft = 0;
  let skip = 0;
  return (chunk) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    let i = 0;
    let done = 0;
    for (;;) {
      if (skip > 0) {
        const n = Math.min(skip, pending.length - i);
        i += n;
        skip -= n;
        if (skip > 0) break;
        if (argsLeft === 0) done++;
        continue;
      }
      const eol = pending.indexOf("\r\n", i);
      if (eol < 0) break;
      const line = pending.toString("latin1", i, eol);
      i = eol + 2;
      if (line.startsWith("*")) {
        argsLeft = Number(line.slice(1));
        if (argsLeft <= 0) done++;
      } else if (line.startsWith("$")) {
        argsLeft--;
        skip = Number(line.slice(1)) + 2;
      } else if (argsLeft === 0) {
        done++; // an inline command
      }
    }
    pending = pending.subarray(i);
    return done;
  };
}

/** Each command of a chunk with its first argument, roughly (for reading a dump, not for counting). */
function commandNames(d: Buffer): string {
  const words = d.toString("latin1").split("\r\n");
  const names: string[] = [];
  for (let i = 0; i < words.length; i++)
    if (/^\*\d+$/.test(words[i]!) && words[i + 2] !== undefined)
      names.push(`${words[i + 2]!.toUpperCase()}(${(words[i + 4] ?? "").slice(0, 200)})`);
  return names.join(" ");
}

/** `REDIS_WIRE_LOG=<file>`: every chunk's time and command names are written there at close. */
const logFile = process.env.REDIS_WIRE_LOG;

export async function startRedisWire(target: { host: string; port: number }): Promise<RedisWire> {
  const chunks: WireChunk[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = createConnection(target);
    const count = createCommandCounter();
    sockets.add(client);
    sockets.add(upstream);
    client.on("data", (d: Buffer) => {
      chunks.push({ at: now(), commands: count(d), names: commandNames(d) });
      upstream.write(d);
    });
    upstream.on("data", (d: Buffer) => client.write(d));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("close", end);
    upstream.on("close", end);
    client.on("error", end);
    upstream.on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("redis wire: no port");
  return {
    url: `redis://127.0.0.1:${address.port}`,
    chunks,
    between(from, to) {
      let roundTrips = 0;
      let commands = 0;
      for (const c of chunks) {
        if (c.at >= from && c.at < to) {
          roundTrips++;
          commands += c.commands;
        }
      }
      return { roundTrips, commands };
    },
    close: async () => {
      if (logFile)
        writeFileSync(logFile, chunks.map((c) => `${c.at.toFixed(1)} ${c.commands} ${c.names}`).join("\n"));
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
