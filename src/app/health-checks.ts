/**
 * The `/healthz` checks of a running process: the store, the model endpoint (probed in the
 * background and cached, so a health poll never waits on the model), each platform adapter's
 * connection, and the MCP servers with their warnings.
 */
import type { Config } from "../config.js";
import type { PlatformAdapter } from "../core/conversations/types.js";
import { endpointOf } from "../core/llm/endpoint.js";
import type { McpToolSurface } from "../core/tools/surface.js";
import type { HealthCheck } from "../ops/health.js";
import type { Store } from "../store/types.js";

/** `/healthz` entry for the store: not ok while Redis is unreachable (the bot still answers). */
function storeHealthCheck(store: Store): HealthCheck {
  return { name: "store", check: () => ({ ok: store.healthy(), detail: { kind: store.kind } }) };
}

const OPENAI_DEFAULT_BASE = "https://api.openai.com/v1";

interface ProbeResult {
  ok: boolean;
  detail: { url: string; status?: number; error?: string; checkedAt: string };
}

/**
 * `GET {base}/models`: any answer but 401/403/5xx means the endpoint is reachable and accepts the
 * key. Probed at most every `everyMs`; the cached result is served meanwhile.
 */
export function modelHealthCheck(cfg: Config, everyMs = 30_000, timeoutMs = 5_000): HealthCheck {
  // Credentials in the base URL travel as a header; the URL shown in the report has none.
  const endpoint = endpointOf(cfg.OPENAI_BASE_URL);
  const url = `${(endpoint.baseURL ?? OPENAI_DEFAULT_BASE).replace(/\/+$/, "")}/models`;
  let last: ProbeResult | undefined;
  let lastAt = 0;
  let inFlight: Promise<ProbeResult> | undefined;

  const probe = async (): Promise<ProbeResult> => {
    const checkedAt = new Date().toISOString();
    try {
      const res = await fetch(url, {
        headers: cfg.OPENAI_API_KEY ? { authorization: `Bearer ${cfg.OPENAI_API_KEY}` } : endpoint.headers,
        signal: AbortSignal.timeout(timeoutMs),
      });
      await res.body?.cancel();
      const ok = res.status < 500 && res.status !== 401 && res.status !== 403;
      return { ok, detail: { url, status: res.status, checkedAt } };
    } catch (err) {
      return { ok: false, detail: { url, error: (err as Error).message, checkedAt } };
    }
  };

  return {
    name: "model",
    check: async () => {
      if (!inFlight && Date.now() - lastAt >= everyMs) {
        inFlight = probe().then((r) => {
          last = r;
          lastAt = Date.now();
          inFlight = undefined;
          return r;
        });
      }
      // The first poll waits for the first probe; later polls get the cached answer at once.
      return last ?? (await inFlight!);
    },
  };
}

export function adapterHealthCheck(adapter: PlatformAdapter): HealthCheck {
  return { name: adapter.platform, check: () => ({ ok: adapter.connected() }) };
}

/** Not ok while a configured server is failed or dead; warnings are listed either way. */
export function toolsHealthCheck(tools: McpToolSurface): HealthCheck {
  return {
    name: "mcp",
    check: () => {
      const servers = tools.servers().map((s) => ({
        server: s.alias,
        status: s.status,
        tools: s.toolCount,
        ...(s.error ? { error: s.error } : {}),
      }));
      const warnings = tools.warnings().map((w) => ({ server: w.server, message: w.message, at: w.at }));
      const ok = servers.every((s) => s.status !== "failed" && s.status !== "dead");
      return { ok, detail: { servers, warnings } };
    },
  };
}

export function healthChecks(
  cfg: Config,
  store: Store,
  tools: McpToolSurface,
  adapters: readonly PlatformAdapter[],
): HealthCheck[] {
  return [
    storeHealthCheck(store),
    modelHealthCheck(cfg),
    ...adapters.map(adapterHealthCheck),
    toolsHealthCheck(tools),
  ];
}
