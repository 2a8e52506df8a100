/**
 * A test-owned local Redis Cluster: `primaries` redis-server processes (each with `replicas`
 * replicas), nothing kept on disk, on ports 17000–17049 and their cluster bus ports 50 above
 * (17050–17099), so it never meets the shared server on 6379 or another engineer's Redis. Several
 * clusters may run at once (test files in parallel, a bench): each takes a free block of ports.
 *
 * Tests call `probeRedisCluster()` at module level and `describe.skipIf(!cluster.ok)`: without the
 * `redis-server` and `redis-cli` binaries they report skipped with the reason, and under CI=true fail.
 */
import { type ChildProcess, execFile, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { portFree } from "./free-port.js";

const run = promisify(execFile);

const FIRST_PORT = 17000;
const LAST_PORT = 17049;
const BUS_OFFSET = 50;

export interface ClusterProbe {
  ok: boolean;
  reason: string;
}

export function probeRedisCluster(): ClusterProbe {
  const missing = ["redis-server", "redis-cli"].filter(
    (bin) => spawnSync(bin, ["--version"], { stdio: "ignore" }).status !== 0,
  );
  const reason = missing.length ? `${missing.join(" and ")} not found (install redis-server)` : "";
  if (reason && process.env.CI === "true")
    throw new Error(`CI=true requires a local Redis Cluster: ${reason}`);
  if (reason) console.warn(`skipping Redis Cluster tests: ${reason}`);
  return { ok: !reason, reason };
}

export interface ClusterNode {
  port: number;
  process: ChildProcess;
}

export interface LocalCluster {
  /** Every node's URL: what `REDIS_URL` lists with `REDIS_CLUSTER=true`. */
  urls: string[];
  /** `urls` comma-separated. */
  url: string;
  nodes: ClusterNode[];
  /** The port of the primary serving `key`'s hash slot now. */
  primaryOf(key: string): Promise<number>;
  /** A replica of the primary on `port`. */
  replicaOf(port: number): Promise<number>;
  /** Promote the replica on `replicaPort` (`CLUSTER FAILOVER`) and wait until every node agrees. */
  failover(replicaPort: number): Promise<void>;
  /** SIGKILL the node on `port` (a crash) and wait until the cluster has promoted its replica. */
  kill(port: number): Promise<void>;
  /** Kill every node and delete its files. */
  stop(): Promise<void>;
}

export interface ClusterOptions {
  primaries?: number;
  /** Replicas per primary (1 for failover tests). */
  replicas?: number;
  /** `cluster-node-timeout`: how soon a dead primary is failed over. */
  nodeTimeoutMs?: number;
}

const cli = async (port: number, ...args: string[]): Promise<string> =>
  (await run("redis-cli", ["-p", String(port), ...args])).stdout.trim();

function startNode(port: number, dir: string, nodeTimeoutMs: number): Promise<ChildProcess> {
  const child = spawn("redis-server", [
    "--port",
    String(port),
    "--cluster-port",
    String(port + BUS_OFFSET),
    "--bind",
    "127.0.0.1",
    "--cluster-enabled",
    "yes",
    "--cluster-config-file",
    join(dir, `nodes-${port}.conf`),
    "--cluster-node-timeout",
    String(nodeTimeoutMs),
    "--dir",
    dir,
    "--save",
    "",
    "--appendonly",
    "no",
  ]);
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("Ready to accept connections")) resolve(child);
    });
    child.once("exit", (code) =>
      reject(new Error(`redis-server on ${port} exited (${code}): ${out.slice(-300)}`)),
    );
  });
}

async function killNode(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await gone;
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`Redis Cluster: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Lines of `CLUSTER NODES` as [port, flags, master id, own id]. */
async function clusterNodes(
  port: number,
): Promise<Array<{ id: string; port: number; flags: string; master: string }>> {
  return (await cli(port, "cluster", "nodes")).split("\n").map((line) => {
    const [id, addr, flags, master] = line.split(" ") as [string, string, string, string];
    return { id, port: Number(addr.split("@")[0]!.split(":")[1]), flags, master };
  });
}

/** Every live node sees the cluster ok, and every node alive and one role each (no fail flags). */
async function settled(ports: number[]): Promise<boolean> {
  for (const port of ports) {
    if (!(await cli(port, "cluster", "info")).includes("cluster_state:ok")) return false;
    const nodes = (await clusterNodes(port)).filter((n) => ports.includes(n.port));
    if (nodes.length !== ports.length || nodes.some((n) => /fail|handshake|noaddr/.test(n.flags)))
      return false;
  }
  return true;
}

export async function startRedisCluster(opts: ClusterOptions = {}): Promise<LocalCluster> {
  const primaries = opts.primaries ?? 3;
  const size = primaries * (1 + (opts.replicas ?? 0));
  const blocks = Math.floor((LAST_PORT - FIRST_PORT + 1) / size);
  const order = Array.from({ length: blocks }, (_, i) => i).sort(() => Math.random() - 0.5);
  for (const block of order) {
    const ports = Array.from({ length: size }, (_, i) => FIRST_PORT + block * size + i);
    const free = await Promise.all(ports.flatMap((p) => [portFree(p), portFree(p + BUS_OFFSET)]));
    if (!free.every(Boolean)) continue;
    const dir = mkdtempSync(join(tmpdir(), "neo-redis-cluster-"));
    const started = await Promise.allSettled(ports.map((p) => startNode(p, dir, opts.nodeTimeoutMs ?? 1000)));
    const nodes = started.flatMap((s, i) =>
      s.status === "fulfilled" ? [{ port: ports[i]!, process: s.value }] : [],
    );
    if (nodes.length !== size) {
      // Another cluster took a port between the check and the start: try the next block.
      await Promise.all(nodes.map((n) => killNode(n.process)));
      rmSync(dir, { recursive: true, force: true });
      continue;
    }
    const cluster = localCluster(nodes, dir);
    try {
      await run("redis-cli", [
        "--cluster",
        "create",
        ...ports.map((p) => `127.0.0.1:${p}`),
        "--cluster-replicas",
        String(opts.replicas ?? 0),
        "--cluster-yes",
      ]);
      await until("the cluster to form", () => settled(ports));
      // A replica that never synced has no data age and refuses to fail over (and would lose the
      // primary's writes): wait until every replica's link to its primary is up.
      await until("the replicas' initial sync", async () => {
        const infos = await Promise.all(ports.map((p) => cli(p, "info", "replication")));
        return infos.every((i) => i.includes("role:master") || i.includes("master_link_status:up"));
      });
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }
  throw new Error(`no free block of ${size} ports in ${FIRST_PORT}-${LAST_PORT} for a Redis Cluster`);
}

function localCluster(nodes: ClusterNode[], dir: string): LocalCluster {
  const urls = nodes.map((n) => `redis://127.0.0.1:${n.port}`);
  const alive = () => nodes.filter((n) => n.process.exitCode === null && n.process.signalCode === null);
  const anyPort = () => alive()[0]!.port;
  const primaryOf = async (key: string): Promise<number> => {
    const slot = Number(await cli(anyPort(), "cluster", "keyslot", key));
    const slots = JSON.parse(await cli(anyPort(), "--json", "cluster", "slots")) as Array<
      [number, number, [string, number]]
    >;
    const range = slots.find(([from, to]) => slot >= from && slot <= to);
    if (!range) throw new Error(`no primary serves slot ${slot}`);
    return range[2][1];
  };
  const replicaOf = async (port: number): Promise<number> => {
    const nodesNow = await clusterNodes(anyPort());
    const primary = nodesNow.find((n) => n.port === port);
    const replica = nodesNow.find((n) => n.master === primary?.id && !n.flags.includes("fail"));
    if (!replica) throw new Error(`the node on ${port} has no live replica`);
    return replica.port;
  };
  return {
    urls,
    url: urls.join(","),
    nodes,
    primaryOf,
    replicaOf,
    async failover(replicaPort) {
      await cli(replicaPort, "cluster", "failover");
      await until(
        "the failover",
        async () =>
          (await clusterNodes(replicaPort)).some(
            (n) => n.port === replicaPort && n.flags.includes("master"),
          ) && settled(alive().map((n) => n.port)),
      );
    },
    async kill(port) {
      const replica = await replicaOf(port);
      await killNode(nodes.find((n) => n.port === port)!.process);
      await until(
        "the replica's promotion",
        async () =>
          (await clusterNodes(replica)).some((n) => n.port === replica && n.flags.includes("master")) &&
          (await cli(replica, "cluster", "info")).includes("cluster_state:ok"),
      );
    },
    async stop() {
      await Promise.all(nodes.map((n) => killNode(n.process)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
