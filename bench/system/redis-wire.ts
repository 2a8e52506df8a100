/**
 * A TCP pass-through in front of the bench's redis-server that counts what the bot asks of it.
 * The bot talks RESP to this proxy (its REDIS_URL), the proxy to Redis. Every chunk the client
 * writes is one round trip's request (node-redis writes the commands queued in one tick as one
 * pipeline, so a chunk is what the bot sent without waiting for an answer in between); the RESP
 * arrays inside it are the commands. Each chunk is stamped with the ledger's clock, so a run can
 * count the round trips and commands that fall between two moments of one message. The pass-through
 * runs on its own thread (redis-wire-thread.mjs), so the bench's busy event loop never delays the
 * bot's round trips; its reports reach `chunks` a moment later (`flush` waits for them).
 */
import { writeFileSync } from "node:fs";
import { Worker } from "node:worker_threads";
import { z } from "zod";

export interface WireChunk {
  at: number;
  commands: number;
  /** The command names in it, each with its first argument (`GET(key)`): what it was about. */
  names: string;
}

export interface RedisWire {
  url: string;
  chunks: WireChunk[];
  /** Resolves when every chunk sent before the call is in `chunks` (they come from another thread). */
  flush(): Promise<void>;
  /** Round trips and commands sent in [from, to). */
  between(from: number, to: number): { roundTrips: number; commands: number };
  close(): Promise<void>;
}

/** What the wire's thread tells (bench/system/redis-wire-thread.mjs). */
const Report = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("listening"), port: z.number() }),
  z.object({
    kind: z.literal("chunk"),
    chunk: z.object({ at: z.number(), commands: z.number(), names: z.string() }),
  }),
  z.object({ kind: z.literal("flushed"), id: z.number() }),
  z.object({ kind: z.literal("closed"), id: z.number() }),
]);

/** `REDIS_WIRE_LOG=<file>`: every chunk's time and command names are written there at close. */
const logFile = process.env.REDIS_WIRE_LOG;

export async function startRedisWire(target: { host: string; port: number }): Promise<RedisWire> {
  const chunks: WireChunk[] = [];
  const worker = new Worker(new URL("./redis-wire-thread.mjs", import.meta.url), { workerData: target });
  const waiting = new Map<number, () => void>();
  let nextId = 0;
  let listening: (port: number) => void = () => {};
  const port = new Promise<number>((resolve, reject) => {
    listening = resolve;
    worker.once("error", reject);
  });
  worker.on("message", (m: unknown) => {
    const r = Report.parse(m);
    if (r.kind === "listening") listening(r.port);
    else if (r.kind === "chunk") chunks.push(r.chunk);
    else {
      waiting.get(r.id)?.();
      waiting.delete(r.id);
    }
  });
  /** Asks the thread, whose reports arrive in order: on the answer every earlier chunk is in. */
  const ask = (kind: "flush" | "close") =>
    new Promise<void>((resolve) => {
      const id = nextId++;
      waiting.set(id, resolve);
      worker.postMessage({ kind, id });
    });
  return {
    url: `redis://127.0.0.1:${await port}`,
    chunks,
    flush: () => ask("flush"),
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
      await ask("close");
      await worker.terminate();
      if (logFile)
        writeFileSync(logFile, chunks.map((c) => `${c.at.toFixed(1)} ${c.commands} ${c.names}`).join("\n"));
    },
  };
}
