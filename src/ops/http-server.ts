/** A small HTTP server for the ops routes when no Slack HTTP receiver owns the port. */
import { createServer, type Server } from "node:http";
import type { OpsRoute } from "./health.js";

export async function startOpsServer(
  port: number,
  routes: readonly OpsRoute[],
  host = "0.0.0.0",
): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const route = routes.find((r) => r.path === path && r.method === req.method);
    if (route) return route.handler(req, res);
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("not found\n");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
