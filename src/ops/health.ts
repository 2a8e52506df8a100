/**
 * `/healthz` and `/metrics` as plain node:http handlers. `/healthz` is served on the public port
 * (beside Slack's HTTP receiver, Bolt `customRoutes`, or on a small server of its own); `/metrics`
 * only on its own server (NEO_METRICS_PORT, loopback unless a bearer token guards it).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { registry } from "./metrics.js";
import { redactUrls } from "./redact.js";

/** One component's view of its own health. `ok: false` makes /healthz answer 503. */
export interface HealthCheck {
  name: string;
  check(): Promise<{ ok: boolean; detail?: unknown }> | { ok: boolean; detail?: unknown };
}

export interface HealthReport {
  status: "ok" | "degraded";
  checks: Record<string, { ok: boolean; detail?: unknown }>;
}

export async function runHealthChecks(checks: readonly HealthCheck[]): Promise<HealthReport> {
  const entries = await Promise.all(
    checks.map(async (c) => {
      try {
        return [c.name, await c.check()] as const;
      } catch (err) {
        return [c.name, { ok: false, detail: (err as Error).message }] as const;
      }
    }),
  );
  const out = Object.fromEntries(entries);
  return { status: entries.every(([, r]) => r.ok) ? "ok" : "degraded", checks: out };
}

export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface OpsRoute {
  path: string;
  method: "GET";
  handler: RouteHandler;
}

/**
 * `/healthz`, in Bolt's `customRoutes` shape. `scrub` cleans the report before it leaves (the app
 * passes the log's redactor: registered secrets and URL credentials; default URL credentials).
 */
export function healthRoute(
  checks: readonly HealthCheck[],
  scrub: (text: string) => string = redactUrls,
): OpsRoute {
  return {
    path: "/healthz",
    method: "GET",
    handler: (_req, res) => {
      void runHealthChecks(checks).then((report) => {
        res.writeHead(report.status === "ok" ? 200 : 503, { "content-type": "application/json" });
        res.end(scrub(JSON.stringify(report)));
      });
    },
  };
}

const digest = (s: string) => createHash("sha256").update(s).digest();

/** `/metrics`; with `token`, only for `Authorization: Bearer <token>` (compared in constant time). */
export function metricsRoute(token?: string): OpsRoute {
  const want = token ? digest(`Bearer ${token}`) : undefined;
  return {
    path: "/metrics",
    method: "GET",
    handler: (req, res) => {
      if (want && !timingSafeEqual(digest(req.headers.authorization ?? ""), want)) {
        res.writeHead(401, {
          "content-type": "text/plain",
          "www-authenticate": 'Bearer realm="neo-metrics"',
        });
        res.end("unauthorized\n");
        return;
      }
      void registry.metrics().then((text) => {
        res.writeHead(200, { "content-type": registry.contentType });
        res.end(text);
      });
    },
  };
}
