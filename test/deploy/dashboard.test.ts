/**
 * The Grafana dashboard and the Prometheus alert rules in deploy/ use only series that Neo's live
 * `/metrics` exports: the real route on a real server, read as Prometheus reads it (its `# TYPE`
 * lines; a histogram's series are its `_bucket`, `_sum` and `_count`). A renamed metric fails here
 * instead of leaving a panel empty or an alert that can never fire.
 */
import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { metricsRoute } from "../../src/ops/health.js";
import { startOpsServer } from "../../src/ops/http-server.js";

const root = new URL("../../", import.meta.url);
const dashboard = JSON.parse(readFileSync(new URL("deploy/grafana/neo-dashboard.json", root), "utf8")) as {
  panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
};
const rules = parse(readFileSync(new URL("deploy/prometheus/neo-alerts.yml", root), "utf8")) as {
  groups: Array<{ rules: Array<{ alert: string; expr: string }> }>;
};

/** Every series name `/metrics` text offers, from its `# TYPE` lines. */
function exportedSeries(text: string): Set<string> {
  const names = new Set<string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name, type] = m as unknown as [string, string, string];
    names.add(name);
    if (type === "histogram") for (const s of ["_bucket", "_sum", "_count"]) names.add(name + s);
    if (type === "summary") for (const s of ["_sum", "_count"]) names.add(name + s);
  }
  return names;
}

/** The `neo_` series an expression reads. */
const seriesIn = (expr: string): string[] => [...expr.matchAll(/\bneo_[a-z0-9_]+\b/g)].map((m) => m[0]);

/** Each expression with the series it reads that `/metrics` does not export. */
function unknownSeries(exprs: Array<{ where: string; expr: string }>, exported: Set<string>) {
  return exprs.flatMap(({ where, expr }) =>
    seriesIn(expr)
      .filter((s) => !exported.has(s))
      .map((series) => ({ where, series })),
  );
}

const dashboardExprs = (d: typeof dashboard) =>
  d.panels.flatMap((p) => p.targets.map((t) => ({ where: `panel "${p.title}"`, expr: t.expr })));
const ruleExprs = rules.groups.flatMap((g) =>
  g.rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr })),
);

let server: Server;
let exported: Set<string>;
beforeAll(async () => {
  server = await startOpsServer(0, [metricsRoute()], "127.0.0.1");
  const { port } = server.address() as { port: number };
  exported = exportedSeries(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("dashboard and alert rules", () => {
  it("use only series the live /metrics exports", () => {
    expect(exported.size).toBeGreaterThan(20);
    expect(dashboardExprs(dashboard).length).toBeGreaterThan(10);
    expect(ruleExprs.length).toBeGreaterThan(5);
    expect(unknownSeries([...dashboardExprs(dashboard), ...ruleExprs], exported)).toEqual([]);
  });

  it("fail on a seeded unknown metric name", () => {
    const seeded = structuredClone(dashboard);
    seeded.panels[0]!.targets[0]!.expr = "sum(rate(neo_answers_made_up_total[5m]))";
    expect(unknownSeries(dashboardExprs(seeded), exported)).toEqual([
      { where: `panel "${seeded.panels[0]!.title}"`, series: "neo_answers_made_up_total" },
    ]);
  });

  it("cover what an operator asks first", () => {
    const read = (exprs: Array<{ expr: string }>) => new Set(exprs.flatMap((e) => seriesIn(e.expr)));
    const wanted = [
      "neo_answer_latency_seconds_bucket",
      "neo_queue_wait_seconds_bucket",
      "neo_model_errors_total",
      "neo_tool_calls_total",
      "neo_writeback_unread_total",
      "neo_store_up",
      "neo_platform_rate_limited_total",
      "neo_model_cost_usd_total",
    ];
    for (const [what, exprs] of [
      ["dashboard", dashboardExprs(dashboard)],
      ["alert rules", ruleExprs],
    ] as const) {
      expect({ what, missing: wanted.filter((w) => !read(exprs).has(w)) }).toEqual({ what, missing: [] });
    }
  });
});
