// @ts-check
/**
 * The counting pass-through's own thread (see redis-wire.ts). It runs apart from the bench's event
 * loop, which also serves the fake Slack, the scripted model and the ledger: on that busy loop every
 * round trip the bot made to Redis waited for the bench, and that wait was billed to Neo's handling
 * time (the bare app and the Chat SDK bot use no Redis). Plain JavaScript so that a worker thread
 * runs it under tsx and vitest alike.
 */
import { createConnection, createServer } from "node:net";
import { parentPort, workerData } from "node:worker_threads";

const port = parentPort;
if (!port) throw new Error("redis-wire-thread runs as a worker thread");
/** @type {{ host: string; port: number }} */
const target = workerData;
/** The ledger's clock (bench/system/ledger.ts), which is absolute, so it agrees across threads. */
const now = () => performance.timeOrigin + performance.now();

/** Counts the RESP arrays (commands) a client sends, across chunk boundaries. */
function createCommandCounter() {
  let pending = Buffer.alloc(0);
  /** Bulk strings still to read in the current command, and bytes still to skip in the current one. */
  let argsLeft = 0;
  let skip = 0;
  /** @param {Buffer} chunk */
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

/**
 * Each command of a chunk with its first argument, roughly (for reading a dump, not for counting).
 * @param {Buffer} d
 */
function commandNames(d) {
  const words = d.toString("latin1").split("\r\n");
  /** @type {string[]} */
  const names = [];
  for (let i = 0; i < words.length; i++)
    if (/^\*\d+$/.test(words[i] ?? "") && words[i + 2] !== undefined) {
      const name = (words[i + 2] ?? "").toUpperCase();
      // A script is named by its first key, not its text: what it was about, like any other command.
      const script = name === "EVAL" || name === "EVALSHA";
      names.push(`${name}(${(words[i + (script ? 8 : 4)] ?? "").slice(0, 200)})`);
    }
  return names.join(" ");
}

/** @type {Set<import("node:net").Socket>} */
const sockets = new Set();
const server = createServer((client) => {
  const upstream = createConnection(target);
  const count = createCommandCounter();
  sockets.add(client);
  sockets.add(upstream);
  client.on("data", (/** @type {Buffer} */ d) => {
    const at = now();
    upstream.write(d);
    port.postMessage({ kind: "chunk", chunk: { at, commands: count(d), names: commandNames(d) } });
  });
  upstream.on("data", (/** @type {Buffer} */ d) => client.write(d));
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

port.on("message", (/** @type {{ kind: "flush" | "close"; id: number }} */ m) => {
  if (m.kind === "flush") port.postMessage({ kind: "flushed", id: m.id });
  else {
    for (const s of sockets) s.destroy();
    server.close(() => port.postMessage({ kind: "closed", id: m.id }));
  }
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("redis wire: no port");
  port.postMessage({ kind: "listening", port: address.port });
});
