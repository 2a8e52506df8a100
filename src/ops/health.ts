/**
 * `/healthz` and `/metrics` as plain node:http handlers, so they can be served on their own port or
 * mounted beside Slack's HTTP receiver on the same port (Bolt `customRoutes`).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { registry } from "./metrics.js";

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

/** The routes, in Bolt's `customRoutes` shape. */
export function opsRoutes(checks: readonly HealthCheck[]): OpsRoute[] {
  return [
    {
      path: "/healthz",
      method: "GET",
      handler: (_req, res) => {
        void runHealthChecks(checks).then((report) => {
          res.writeHead(report.status === "ok" ? 200 : 503, { "content-type": "application/json" });
          res.end(JSON.stringify(report));
        });
      },
    },
    {
      path: "/metrics",
      method: "GET",
      handler: (_req, res) => {
        void registry.metrics().then((text) => {
          res.writeHead(200, { "content-type": registry.contentType });
          res.end(text);
        });
      },
    },
  ];
}
