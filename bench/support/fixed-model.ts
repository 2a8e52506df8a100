/**
 * What the conversation benches run the loop against: a local OpenAI-compatible endpoint answering
 * every request with a short text after a fixed delay, and the agent deps pointed at it (real
 * openai SDK, no tools, no memory).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { loadConfig } from "../../src/config.js";
import type { AgentDeps } from "../../src/core/agent/deps.js";
import { limitsFromConfig } from "../../src/core/agent/limits.js";
import { NO_MEMORY } from "../../src/core/agent/no-memory.js";
import { createLlmClient } from "../../src/core/llm/client.js";
import { createUsageLedger, pricesFromConfig } from "../../src/core/llm/usage-ledger.js";
import { emptyToolSurface } from "../../src/core/tools/empty-surface.js";

/**
 * An OpenAI-compatible endpoint that answers every request with a short text after a fixed delay:
 * as server-sent events when the request streams (the client always does), else as one JSON body.
 */
export async function fixedLatencyModel(latencyMs: number): Promise<{ url: string; server: Server }> {
  const usage = { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 };
  const base = { id: "chatcmpl-bench", created: 0, model: "bench" };
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString("utf8");
    });
    req.on("end", () => {
      const streamed = (JSON.parse(body || "{}") as { stream?: boolean }).stream === true;
      setTimeout(() => {
        if (!streamed) {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(
            JSON.stringify({
              ...base,
              object: "chat.completion",
              choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
              usage,
            }),
          );
          return;
        }
        const chunk = (choices: unknown[], extra = {}) =>
          `data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices, ...extra })}\n\n`;
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(
          chunk([{ index: 0, delta: { role: "assistant", content: "ok" }, finish_reason: null }]) +
            chunk([{ index: 0, delta: {}, finish_reason: "stop" }]) +
            chunk([], { usage }) +
            "data: [DONE]\n\n",
        );
      }, latencyMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, server };
}

export function agentDeps(url: string): AgentDeps {
  const cfg = loadConfig({ OPENAI_BASE_URL: url, OPENAI_API_KEY: "sk-bench", NEO_LLM_MAX_RETRIES: "0" });
  const llm = createLlmClient(cfg, createUsageLedger(pricesFromConfig(cfg)));
  const limits = limitsFromConfig(cfg);
  return { llm, tools: emptyToolSurface, memory: NO_MEMORY, limits };
}
