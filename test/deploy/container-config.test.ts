/**
 * The container as documented, checked without a Docker engine: the Dockerfile, docker-compose.yml,
 * .env.example and package.json agree with each other and with the config schema (every variable
 * documented with its default, one port, a writable data dir on a volume, Redis with AOF and a
 * health check, non-root, built JS for every script the image runs, Node version).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { checkDeployFiles, type DeployFiles } from "./container-config.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const read = (name: string) => readFileSync(`${root}${name}`, "utf8");
const real: DeployFiles = {
  dockerfile: read("Dockerfile"),
  compose: read("docker-compose.yml"),
  envExample: read(".env.example"),
  packageJson: read("package.json"),
  packageLock: read("package-lock.json"),
  dockerignore: read(".dockerignore"),
  root,
};

describe("Dockerfile, docker-compose.yml, .env.example and the config schema", () => {
  it("agree", () => {
    expect(checkDeployFiles(real)).toEqual([]);
  });

  it("a .env.example that sets the data dir to the old image path is caught (the EACCES of issue 21)", () => {
    const envExample = real.envExample.replace("NEO_DATA_DIR=./data", "NEO_DATA_DIR=/data");
    expect(checkDeployFiles({ ...real, envExample })).toEqual([
      '.env.example: NEO_DATA_DIR=/data is not the default ("./data")',
      "Dockerfile: NEO_DATA_DIR is /data in the container, but the image does not create it owned by node",
      "Dockerfile: NEO_DATA_DIR /data is not a VOLUME",
      "docker-compose.yml: no volume is mounted at NEO_DATA_DIR /data",
    ]);
  });

  it("catches a compose file that --scale neo=3 breaks: a pinned hostname (one instance id) or a fixed host port", () => {
    const compose = real.compose.replace(
      /\n {4}ports:\n {6}- "3000-3009:3000"\n/,
      '\n    hostname: neo-1\n    ports:\n      - "3000:3000"\n',
    );
    expect(compose).not.toBe(real.compose);
    expect(checkDeployFiles({ ...real, compose })).toEqual([
      "docker-compose.yml: neo pins hostname, so --scale replicas share one instance id or cannot start",
      "docker-compose.yml: neo publishes fixed host port 3000, which a second --scale replica cannot bind (publish a range, e.g. 3000-3009:3000)",
    ]);
  });

  it("catches a variable missing from .env.example, a wrong default, and an unknown one", () => {
    const envExample = real.envExample
      .replace(/^NEO_STEP_BUDGET=.*$/m, "")
      .replace("NEO_SOFT_PCT=80", "NEO_SOFT_PCT=70")
      .concat("\nNEO_NOT_A_SETTING=1\n");
    expect(checkDeployFiles({ ...real, envExample })).toEqual([
      ".env.example: NEO_STEP_BUDGET (in src/config.ts) is missing",
      ".env.example: NEO_NOT_A_SETTING is not a variable of src/config.ts",
      ".env.example: NEO_SOFT_PCT=70 is not the default (80)",
    ]);
  });

  it("catches a port that disagrees, a root image, Redis without AOF, and a script that needs tsx", () => {
    const dockerfile = real.dockerfile
      .replace("EXPOSE 3000", "EXPOSE 8080")
      .replace("USER node", "USER root");
    const compose = real.compose.replace(', "--appendonly", "yes"', "");
    const pkg = JSON.parse(real.packageJson) as { scripts: Record<string, string> };
    pkg.scripts["register:discord:prod"] = "tsx src/adapters/discord/register-commands.ts";
    const problems = checkDeployFiles({ ...real, dockerfile, compose, packageJson: JSON.stringify(pkg) });
    expect(problems).toContain("Dockerfile: the image runs as root (USER root)");
    expect(problems).toContain("Dockerfile: EXPOSE 8080 but NEO_HTTP_PORT is 3000 in the container");
    expect(problems).toContain("docker-compose.yml: redis runs without AOF persistence (--appendonly yes)");
    expect(problems).toContain(
      "package.json: register:discord:prod does not run built JS (the image has no tsx)",
    );
  });

  it("catches an engines range below what the code needs", () => {
    const pkg = JSON.parse(real.packageJson) as { engines: { node: string } };
    pkg.engines.node = ">=20.10";
    // Without dependencies asking for more, the code's own need (process.loadEnvFile) decides.
    const noDeps = JSON.stringify({ packages: { "": {} } });
    expect(checkDeployFiles({ ...real, packageJson: JSON.stringify(pkg), packageLock: noDeps })).toEqual([
      'package.json: engines.node ">=20.10" allows a Node older than 20.12 (process.loadEnvFile)',
    ]);
  });

  it("catches an engines range below what a production dependency needs", () => {
    const pkg = JSON.parse(real.packageJson) as { engines: { node: string } };
    pkg.engines.node = ">=20.12";
    const lock = JSON.stringify({
      packages: {
        "": {},
        "node_modules/needs-new-node": { engines: { node: ">=20.19.0 || >=22.13.0 || >=24" } },
        "node_modules/dev-only": { dev: true, engines: { node: ">=22" } },
      },
    });
    expect(checkDeployFiles({ ...real, packageJson: JSON.stringify(pkg), packageLock: lock })).toEqual([
      'package.json: engines.node ">=20.12" allows a Node older than 20.19 (needs-new-node)',
    ]);
  });
});
