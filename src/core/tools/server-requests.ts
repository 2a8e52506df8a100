/**
 * Requests a server sends to Neo that it does not handle. Elicitation is the one client capability
 * (`elicitation.ts`); sampling and roots are not declared, so a conforming server sends neither
 * (and `ping` the SDK answers); one that does gets a JSON-RPC "method not found" error saying why, rather than the SDK's bare one. Sampling in
 * particular would spend the deployment's model budget on a server's behalf, outside the turn's
 * approvals: it is declined, and there is no setting to allow it.
 */
import type { McpSdk } from "./mcp-sdk.js";

export function declineServerRequest(sdk: McpSdk, alias: string, method: string): Promise<never> {
  const why =
    method === "sampling/createMessage"
      ? "Neo does not let MCP servers use its model (sampling is not offered)"
      : `Neo does not handle "${method}" from MCP servers`;
  // A plain Error with a code: the SDK sends its message and code as they are (an McpError's
  // message already carries "MCP error -32601:", which the client would then prefix again).
  const err = Object.assign(new Error(`${why} (server "${alias}")`), {
    code: sdk.types.ErrorCode.MethodNotFound,
  });
  return Promise.reject(err);
}
