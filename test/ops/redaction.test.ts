/**
 * Credentials inside URLs never leave the process: not in a log line (even for a URL Neo was never
 * told about, such as an MCP server's), not in `/healthz`, whatever component reports it.
 */
import type { Server } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { log } from "../../src/core/log.js";
import { healthRoute } from "../../src/ops/health.js";
import { startOpsServer } from "../../src/ops/http-server.js";
import { redactUrls } from "../../src/ops/redact.js";
import { captureLogs } from "./support/observe.js";

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

describe("URL credentials", () => {
  it("are cut from URLs in any text: user:password, a lone token, secret query values", () => {
    expect(redactUrls("redis://default:pw-123@cache:6379/0")).toBe("redis://default:[redacted]@cache:6379/0");
    expect(redactUrls("see https://ghp_abcdef@github.com/x")).toBe("see https://[redacted]@github.com/x");
    expect(redactUrls("GET http://h/v1/models?api_key=k1&x=2&access_token=t2")).toBe(
      "GET http://h/v1/models?api_key=[redacted]&x=2&access_token=[redacted]",
    );
    // Not URLs: e-mail addresses and plain text stay as they are.
    expect(redactUrls("mail ann@example.com, a=b")).toBe("mail ann@example.com, a=b");
  });

  it("never reach a log line, even for a URL nobody registered as a secret", () => {
    const logs = captureLogs();
    try {
      log.warn(
        { url: "https://svc:mcp-SECRET-9@tools.example/mcp?token=tok-SECRET-8" },
        "server failed at http://u:inline-SECRET-7@h/x",
      );
    } finally {
      logs.stop();
    }
    expect(logs.lines).toHaveLength(1);
    expect(logs.raw()).not.toContain("SECRET");
    expect(logs.lines[0]!.url).toBe("https://svc:[redacted]@tools.example/mcp?token=[redacted]");
  });

  it("never reach /healthz, whatever a check puts in its detail", async () => {
    const route = healthRoute([
      {
        name: "mcp",
        check: () => ({
          ok: false,
          detail: { warnings: ['server "x" failed: fetch https://svc:hc-SECRET-1@tools.example/mcp'] },
        }),
      },
    ]);
    const server = await startOpsServer(0, [route], "127.0.0.1");
    servers.push(server);
    const port = (server.address() as { port: number }).port;
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    const text = await res.text();
    expect(res.status).toBe(503);
    expect(text).not.toContain("SECRET");
    expect(text).toContain("https://svc:[redacted]@tools.example/mcp");
  });
});
