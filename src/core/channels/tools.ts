/**
 * A channel's tool restriction (`/neo channel tools fs,web`): the turn sees, and may call, only the
 * tools of those MCP servers (`alias__name`), plus Neo's own memory tools (`memory_recall`,
 * `conversation_lookup`, which read the user's memory and this conversation, not a server).
 * `core_execute` reaches every server's Escalate tools, so a restricted channel does not offer it.
 * A call to anything else is refused in-band, like an unknown tool.
 */
import type { ToolSurface } from "../tools/types.js";

const OWN_TOOLS = new Set(["memory_recall", "conversation_lookup"]);

export function restrictTools(surface: ToolSurface, aliases: readonly string[]): ToolSurface {
  const allowed = (name: string) => OWN_TOOLS.has(name) || aliases.some((a) => name.startsWith(`${a}__`));
  return {
    schemas: () => surface.schemas().filter((s) => allowed(s.function.name)),
    dispatch: (name, args, ctx) =>
      allowed(name)
        ? surface.dispatch(name, args, ctx)
        : Promise.resolve({
            content: `Tool ${name} is not available in this channel (an admin limited it to: ${aliases.length ? aliases.join(", ") : "no servers"}).`,
            isError: true,
          }),
  };
}
