/**
 * Checks the deployment files against each other and against the config schema, without a Docker
 * engine: the Dockerfile (final stage), docker-compose.yml, .env.example and package.json. Each
 * problem is one line saying what disagrees with what. Used by container-config.test.ts on the
 * real files and on seeded mismatches.
 */
import { existsSync } from "node:fs";
import { join, posix } from "node:path";
import { parse as parseYaml } from "yaml";
import { envSchema, loadConfig } from "../../src/config.js";

export interface DeployFiles {
  dockerfile: string;
  compose: string;
  envExample: string;
  packageJson: string;
  /** package-lock.json: the Node versions the installed production dependencies declare. */
  packageLock: string;
  dockerignore: string;
  /** Repository root, to check that built files have their sources. */
  root: string;
}

interface Stage {
  from: string;
  env: Record<string, string>;
  workdir: string;
  user: string | undefined;
  expose: number[];
  volumes: string[];
  runs: string[];
  copies: string[];
  healthcheck: string | undefined;
  cmd: string[];
}

/** Instructions of the final stage, continuation lines joined. */
export function finalStage(dockerfile: string): Stage {
  const lines = dockerfile
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
  let stage: Stage | undefined;
  for (const line of lines) {
    const [instr = "", ...restParts] = line.split(/\s+/);
    const rest = restParts.join(" ");
    const op = instr.toUpperCase();
    if (op === "FROM") {
      stage = {
        from: restParts[0] ?? "",
        env: {},
        workdir: "/",
        user: undefined,
        expose: [],
        volumes: [],
        runs: [],
        copies: [],
        healthcheck: undefined,
        cmd: [],
      };
      continue;
    }
    if (!stage) continue;
    if (op === "ENV")
      for (const m of rest.matchAll(/([A-Z_][A-Z0-9_]*)=("[^"]*"|\S*)/g))
        stage.env[m[1]!] = m[2]!.replace(/^"|"$/g, "");
    else if (op === "WORKDIR") stage.workdir = posix.resolve(stage.workdir, rest);
    else if (op === "USER") stage.user = rest;
    else if (op === "EXPOSE") stage.expose.push(...restParts.map((p) => Number.parseInt(p, 10)));
    else if (op === "VOLUME")
      stage.volumes.push(...(rest.startsWith("[") ? (JSON.parse(rest) as string[]) : restParts));
    else if (op === "RUN") stage.runs.push(rest);
    else if (op === "COPY")
      stage.copies.push(posix.resolve(stage.workdir, restParts[restParts.length - 1] ?? "."));
    else if (op === "HEALTHCHECK") stage.healthcheck = rest;
    else if (op === "CMD") stage.cmd = JSON.parse(rest) as string[];
  }
  if (!stage) throw new Error("Dockerfile: no FROM");
  return stage;
}

/** `.env`-style lines `NAME=value` (comments and blank lines skipped). */
export function envEntries(text: string): Map<string, string> {
  return new Map(
    text
      .split("\n")
      .filter((l) => /^[A-Z][A-Z0-9_]*=/.test(l))
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)] as const),
  );
}

interface ComposeService {
  env_file?: string | string[];
  environment?: Record<string, string> | string[];
  ports?: string[];
  hostname?: string;
  container_name?: string;
  volumes?: string[];
  depends_on?: Record<string, { condition?: string }> | string[];
  command?: string[] | string;
  healthcheck?: { test?: unknown };
  build?: unknown;
  image?: string;
}

function composeEnvironment(s: ComposeService): Record<string, string> {
  const e = s.environment ?? {};
  if (Array.isArray(e))
    return Object.fromEntries(e.map((kv) => [kv.split("=")[0]!, kv.slice(kv.indexOf("=") + 1)]));
  return Object.fromEntries(Object.entries(e).map(([k, v]) => [k, String(v)]));
}

/** Node.js 20.12 added `process.loadEnvFile`, which `src/config.ts` uses. */
const NODE_MINIMUM: [number, number] = [20, 12];

const atLeast = (a: [number, number], b: [number, number]) => a[0] > b[0] || (a[0] === b[0] && a[1] >= b[1]);

/**
 * The lowest Node an `engines.node` range allows: the smallest minimum of its alternatives
 * (">=20.19.0 || >=22.13.0" and "^20.19 || >=22.13" allow 20.19).
 */
function engineMinimum(range: string): [number, number] | undefined {
  // Each alternative's lowest version: ">=20.19.0", "^20.19", "20" (any 20.x).
  const mins = range
    .split("||")
    .map((alt) => /^\s*(?:>=|\^|~)?\s*(\d+)(?:\.(\d+))?/.exec(alt))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m): [number, number] => [Number(m[1]), Number(m[2] ?? 0)]);
  return mins.sort((a, b) => a[0] - b[0] || a[1] - b[1])[0];
}

/** What the code and its production dependencies need: the highest of their minimums, and who. */
function nodeNeeded(lock: string): { min: [number, number]; why: string } {
  let need = { min: NODE_MINIMUM, why: "process.loadEnvFile" };
  const pkgs = (
    JSON.parse(lock) as { packages: Record<string, { dev?: boolean; engines?: { node?: string } }> }
  ).packages;
  for (const [path, p] of Object.entries(pkgs)) {
    if (!path || p.dev || typeof p.engines?.node !== "string") continue;
    const min = engineMinimum(p.engines.node);
    if (min && !atLeast(need.min, min)) need = { min, why: path.replace(/^.*node_modules\//, "") };
  }
  return need;
}

export function checkDeployFiles(f: DeployFiles): string[] {
  const problems: string[] = [];
  const say = (p: string) => problems.push(p);
  const schemaNames = Object.keys(envSchema.shape).sort();
  const example = envEntries(f.envExample);

  // .env.example: every variable, nothing else, each with its real default.
  const listed = [...example.keys()].sort();
  for (const n of schemaNames) if (!example.has(n)) say(`.env.example: ${n} (in src/config.ts) is missing`);
  for (const n of listed)
    if (!schemaNames.includes(n)) say(`.env.example: ${n} is not a variable of src/config.ts`);
  try {
    const asIs = loadConfig(Object.fromEntries(example));
    const defaults = loadConfig({});
    for (const n of schemaNames) {
      const a = JSON.stringify((asIs as Record<string, unknown>)[n]);
      const d = JSON.stringify((defaults as Record<string, unknown>)[n]);
      if (a !== d) say(`.env.example: ${n}=${example.get(n)} is not the default (${d ?? "unset"})`);
    }
  } catch (e) {
    say(`.env.example does not load: ${(e as Error).message}`);
  }

  const img = finalStage(f.dockerfile);
  // Non-root.
  if (!img.user || img.user === "root" || img.user === "0")
    say(`Dockerfile: the image runs as root (USER ${img.user ?? "unset"})`);

  // Image ENV: only known variables (and NODE_ENV), each valid.
  for (const [k, v] of Object.entries(img.env)) {
    if (k === "NODE_ENV") continue;
    if (!schemaNames.includes(k)) say(`Dockerfile: ENV ${k} is not a variable of src/config.ts`);
    else {
      try {
        loadConfig({ [k]: v });
      } catch (e) {
        say(`Dockerfile: ENV ${(e as Error).message}`);
      }
    }
  }

  const compose = parseYaml(f.compose) as {
    services?: Record<string, ComposeService>;
    volumes?: Record<string, unknown>;
  };
  const services = compose.services ?? {};
  const neoName = Object.keys(services).find((n) => services[n]!.build !== undefined);
  const neo = neoName ? services[neoName] : undefined;
  if (!neo) {
    say("docker-compose.yml: no service builds the image");
    return problems;
  }
  const envFiles = [neo.env_file ?? []].flat();
  if (!envFiles.includes(".env"))
    say(`docker-compose.yml: ${neoName} does not read .env (the copy of .env.example)`);
  if (!/^\.env$/m.test(f.dockerignore))
    say(".dockerignore: .env is not ignored, so its secrets would be baked into the image");
  const composeEnv = composeEnvironment(neo);
  for (const k of Object.keys(composeEnv)) {
    if (!schemaNames.includes(k))
      say(`docker-compose.yml: environment ${k} is not a variable of src/config.ts`);
  }

  // What the process sees in the container: image ENV < env_file (.env.example as shipped) < environment.
  const effective: Record<string, string> = { ...img.env, ...Object.fromEntries(example), ...composeEnv };
  let cfg: ReturnType<typeof loadConfig>;
  try {
    cfg = loadConfig(effective);
  } catch (e) {
    say(`in the container the configuration does not load: ${(e as Error).message}`);
    return problems;
  }

  // One port everywhere: the config, EXPOSE, the published port and the health check.
  const port = cfg.NEO_HTTP_PORT;
  if (!img.expose.includes(port))
    say(`Dockerfile: EXPOSE ${img.expose.join(" ")} but NEO_HTTP_PORT is ${port} in the container`);
  const published = (neo.ports ?? []).map((p) => Number(String(p).split(":").pop()));
  if (!published.includes(port))
    say(`docker-compose.yml: ports ${JSON.stringify(neo.ports ?? [])} do not publish NEO_HTTP_PORT ${port}`);
  // `docker compose up --scale neo=N`: each replica its own instance id (its container's HOSTNAME)
  // and its own host port.
  if (neo.hostname || neo.container_name)
    say(
      `docker-compose.yml: ${neoName} pins ${neo.hostname ? "hostname" : "container_name"}, so --scale replicas share one instance id or cannot start`,
    );
  if (cfg.NEO_INSTANCE_ID !== undefined)
    say(`docker-compose.yml: NEO_INSTANCE_ID is set for ${neoName}, so --scale replicas share it`);
  for (const p of neo.ports ?? []) {
    const parts = String(p).split(":");
    const host = parts.length > 1 ? parts[parts.length - 2]! : "";
    if (/^\d+$/.test(host))
      say(
        `docker-compose.yml: ${neoName} publishes fixed host port ${host}, which a second --scale replica cannot bind (publish a range, e.g. ${host}-${Number(host) + 9}:${port})`,
      );
  }
  const hc = img.healthcheck ?? "";
  if (!hc.includes("/healthz")) say("Dockerfile: the HEALTHCHECK does not probe /healthz");
  const hcDefault = /NEO_HTTP_PORT\|\|(\d+)/.exec(hc.replace(/\s/g, ""));
  const hcPort = effective.NEO_HTTP_PORT || hcDefault?.[1];
  if (Number(hcPort) !== port)
    say(`Dockerfile: the HEALTHCHECK probes port ${hcPort} but NEO_HTTP_PORT is ${port}`);

  // The data dir: writable by the image's user and kept on a volume.
  const dataDir = posix.resolve(img.workdir, cfg.NEO_DATA_DIR);
  const made = img.runs.some((r) => new RegExp(`mkdir[^&;]*\\s${dataDir}(\\s|$)`).test(r));
  const owned = img.runs.some((r) =>
    new RegExp(`chown[^&;]*\\s${img.user}(:\\S+)?\\s[^&;]*${dataDir}(\\s|$)`).test(r),
  );
  if (!made || !owned)
    say(
      `Dockerfile: NEO_DATA_DIR is ${dataDir} in the container, but the image does not create it owned by ${img.user}`,
    );
  if (!img.volumes.includes(dataDir)) say(`Dockerfile: NEO_DATA_DIR ${dataDir} is not a VOLUME`);
  if (!(neo.volumes ?? []).some((v) => String(v).split(":")[1] === dataDir)) {
    say(`docker-compose.yml: no volume is mounted at NEO_DATA_DIR ${dataDir}`);
  }

  // The manifest ships in the image.
  const manifest = posix.resolve(img.workdir, cfg.NEO_MCP_MANIFEST);
  if (!img.copies.some((c) => manifest === c || manifest.startsWith(`${c}/`)))
    say(`Dockerfile: NEO_MCP_MANIFEST ${manifest} is not copied into the image`);

  // Redis: the service REDIS_URL names, persistent (AOF) and healthy before Neo starts.
  if (!cfg.REDIS_URL) say("docker-compose.yml: REDIS_URL is not set for the container");
  else {
    const host = new URL(cfg.REDIS_URL).hostname;
    const redis = services[host];
    if (!redis) say(`docker-compose.yml: REDIS_URL names host ${host}, which is not a service`);
    else {
      const cmd = [redis.command ?? []].flat().join(" ");
      if (!/--appendonly\s+yes/.test(cmd))
        say(`docker-compose.yml: ${host} runs without AOF persistence (--appendonly yes)`);
      if (!(redis.volumes ?? []).some((v) => String(v).endsWith(":/data")))
        say(`docker-compose.yml: ${host} keeps /data on no volume`);
      if (!redis.healthcheck?.test) say(`docker-compose.yml: ${host} has no health check`);
      const dep = neo.depends_on;
      const cond = dep && !Array.isArray(dep) ? dep[host]?.condition : undefined;
      if (cond !== "service_healthy")
        say(`docker-compose.yml: ${neoName} does not wait for ${host} to be healthy`);
    }
  }

  // Built JS that is run has its source.
  const pkg = JSON.parse(f.packageJson) as { scripts: Record<string, string>; engines?: { node?: string } };
  const runs = [img.cmd.join(" "), ...Object.values(pkg.scripts)];
  for (const r of runs) {
    for (const m of r.matchAll(/\bdist\/(\S+)\.js\b/g)) {
      if (!existsSync(join(f.root, "src", `${m[1]}.ts`)))
        say(`dist/${m[1]}.js is run but src/${m[1]}.ts does not exist`);
    }
  }
  if (img.cmd.join(" ") !== "node dist/main.js")
    say(`Dockerfile: CMD is ${JSON.stringify(img.cmd)}, not node dist/main.js`);
  for (const name of ["register:discord", "start"]) {
    const prod = pkg.scripts[`${name}:prod`];
    if (!prod?.startsWith("node dist/"))
      say(`package.json: ${name}:prod does not run built JS (the image has no tsx)`);
  }

  // Node: engines says what the code needs, and the image's Node satisfies it.
  const min = engineMinimum(pkg.engines?.node ?? "");
  const needed = nodeNeeded(f.packageLock);
  if (!min || !atLeast(min, needed.min)) {
    say(
      `package.json: engines.node "${pkg.engines?.node}" allows a Node older than ${needed.min.join(".")} (${needed.why})`,
    );
  }
  const imageMajor = Number(/^node:(\d+)/.exec(img.from)?.[1]);
  if (!min || !(imageMajor >= min[0]))
    say(`Dockerfile: FROM ${img.from} does not satisfy engines.node "${pkg.engines?.node}"`);

  return problems;
}
