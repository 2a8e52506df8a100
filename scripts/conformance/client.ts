/**
 * The client the MCP conformance suite drives (`npm run conformance:mcp`): Neo's own server
 * connection (`src/core/tools/server-connection.ts`, the code every manifest HTTP server goes
 * through) pointed at the scenario's server, the URL the suite appends as the last argument. It
 * lists the tools and calls each once, as the model would, with arguments made from its schema.
 * A server's question (`elicitation/create`) is accepted as shown, with the schema's defaults.
 * Exits non-zero when the server cannot be started or a call fails in transport.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { formFields, readAnswers } from "../../src/core/tools/elicitation.js";
import type { CallElicitor } from "../../src/core/tools/server-calls.js";
import { createServerConnection } from "../../src/core/tools/server-connection.js";

const url = process.argv.at(-1);
if (!url?.startsWith("http")) {
  console.error("usage: client.ts <server-url> (the conformance suite appends it)");
  process.exit(2);
}

/** A value of the schema's type: the suite's tools check types, not values. */
function sample(schema: Record<string, unknown> | undefined, name: string): unknown {
  if (schema?.default !== undefined) return schema.default;
  if (Array.isArray(schema?.enum)) return schema.enum[0];
  switch (schema?.type) {
    case "number":
    case "integer":
      return name === "b" ? 3 : 2;
    case "boolean":
      return true;
    case "array":
      return [];
    case "object":
      return {};
    default:
      return "conformance";
  }
}

function argumentsFor(tool: Tool): Record<string, unknown> {
  const props = (tool.inputSchema.properties ?? {}) as Record<string, Record<string, unknown>>;
  return Object.fromEntries(Object.entries(props).map(([k, s]) => [k, sample(s, k)]));
}

/** A person who accepts a form as it is shown, prefilled with the schema's defaults. */
const acceptsDefaults: CallElicitor = {
  requester: "conformance",
  ask: async (params) => {
    if (params.mode === "url") return { action: "accept" };
    const read = readAnswers(formFields(params.requestedSchema), {});
    return "error" in read ? { action: "cancel" } : { action: "accept", content: read.content };
  },
};

let failed = false;
const conn = createServerConnection({
  alias: "conformance",
  spec: { url, headers: {} },
  env: process.env,
  spawnTimeoutMs: 20_000,
  callTimeoutMs: 20_000,
  maxRestarts: 0,
  onToolsChanged: () => {},
  onWarning: (message) => {
    failed = true;
    console.error(message);
  },
});

await conn.start();
for (const tool of conn.tools()) {
  try {
    const result = await conn.call(tool.name, argumentsFor(tool), tool.name, { elicit: acceptsDefaults });
    console.log(`${tool.name}: ${JSON.stringify(result.content)}`);
  } catch (err) {
    failed = true;
    console.error(`${tool.name}: ${(err as Error).message}`);
  }
}
await conn.close();
process.exit(failed || conn.info().status === "failed" ? 1 : 0);
