/**
 * The three-replica Kubernetes example in docs/operations.md, checked without a cluster: it parses,
 * runs three replicas that get their instance ids from their pod names (nothing pins
 * `NEO_INSTANCE_ID`), names only variables of src/config.ts, loads as a configuration (a metrics
 * host beyond loopback with its token from the Secret), and its ports are the ones the process binds.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { processPlaceOf } from "../../src/app/process-place.js";
import { envSchema, loadConfig } from "../../src/config.js";

const doc = readFileSync(new URL("../../docs/operations.md", import.meta.url), "utf8");
const block = /\*\*Kubernetes, three replicas\*\*[\s\S]*?```yaml\n([\s\S]*?)```/.exec(doc)?.[1] ?? "";

interface K8sObject {
  kind: string;
  spec: {
    replicas?: number;
    selector: { matchLabels?: Record<string, string> } & Record<string, string>;
    template: { spec: { containers: Container[] } };
  };
}

interface Container {
  env: Array<{ name: string; value: string }>;
  envFrom: Array<{ secretRef?: { name: string } }>;
  ports: Array<{ name: string; containerPort: number }>;
  readinessProbe: { httpGet: { path: string; port: string } };
}

describe("docs/operations.md: the Kubernetes example", () => {
  it("runs three replicas whose settings load and whose ports are the ones Neo binds", () => {
    const objects = parseAllDocuments(block).map((d) => d.toJS() as K8sObject);
    const set = objects.find((o) => o.kind === "StatefulSet");
    expect(set?.spec.replicas).toBe(3);
    const c = set!.spec.template.spec.containers[0]!;
    const names = c.env.map((e) => e.name);
    const schema = Object.keys(envSchema.shape);
    expect(names.filter((n) => !schema.includes(n))).toEqual([]);
    expect(names).not.toContain("NEO_INSTANCE_ID");
    expect(c.envFrom.map((e) => e.secretRef?.name)).toEqual(["neo"]);
    // The Secret holds the metrics token that a non-loopback metrics host requires.
    const env = {
      ...Object.fromEntries(c.env.map((e) => [e.name, e.value])),
      OPENAI_API_KEY: "sk-test",
      NEO_METRICS_TOKEN: "k8s-secret-metrics-token",
    };
    const cfg = loadConfig(env);
    const pods = ["neo-0", "neo-1", "neo-2"].map((pod) => processPlaceOf(cfg, { ...env, HOSTNAME: pod }));
    expect(new Set(pods.map((p) => p.instanceId)).size).toBe(3);
    const port = (name: string) => c.ports.find((p) => p.name === name)?.containerPort;
    expect([port("http"), port("metrics")]).toEqual([pods[0]!.httpPort, pods[0]!.metricsPort]);
    expect(c.readinessProbe.httpGet).toEqual({ path: "/healthz", port: "http" });
    const svc = objects.find((o) => o.kind === "Service");
    expect(svc?.spec.selector).toEqual(set!.spec.selector.matchLabels);
  });
});
