/** `/neo help`: the commands this caller has. */
import { USAGE } from "./parse.js";
import { ADMIN_COMMANDS, type CommandName } from "./types.js";

export function helpText(isAdmin: boolean): string {
  const line = (n: CommandName, what: string) => `• \`${USAGE[n]}\` — ${what}`;
  const user = [
    line("help", "this list"),
    line("ask", "ask Neo something; the answer is posted here"),
    line(
      "memory",
      "what Neo remembers about you, to forget or show elsewhere (`export`: all of it, as a file)",
    ),
    line("forget", "wipe what Neo remembers about you (asks to confirm)"),
    line("reset", "start a thread over"),
    line("usage", "your model usage and cost, today and this month (admins: a user's, or `all`)"),
    line(
      "connections",
      "the tool servers you are signed in to; `disconnect <server>` signs you out, `signin <server>` sends you a new sign-in link",
    ),
  ];
  const admin = [
    line("status", "models, store, MCP servers, threads, queue, pending approvals"),
    line("tools", "tools Neo may call freely (Natural) and those that need approval (Escalate)"),
    line("approvals", "list or cancel pending spend approvals"),
    line("allow", "let a user talk to Neo again"),
    line("deny", "stop a user from using Neo"),
    line("limit", "set a user's spend cap"),
    line("budget", "set a user's daily model budget in USD, or back to the default"),
    line("compact", "compact a thread's transcript now"),
    line("reload", "restart the MCP servers"),
    line("channel", "this channel's settings: on/off, mention, instructions, model, tools"),
  ];
  return [
    "*Neo commands*",
    ...user,
    ...(isAdmin ? ["", "*Admin*", ...admin] : ["", `Admins also have: ${ADMIN_COMMANDS.join(", ")}.`]),
  ].join("\n");
}
