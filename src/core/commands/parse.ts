/** `/neo` text → a typed {@link Command}. Pure; arguments validated with zod. */
import { z } from "zod";
import { ADMIN_COMMANDS, type Command, type CommandName, USER_COMMANDS } from "./types.js";

export const USAGE: Record<CommandName, string> = {
  help: "/neo help",
  ask: "/neo ask <question>",
  memory: "/neo memory [export]",
  forget: "/neo forget",
  reset: "/neo reset [thread link]",
  connections: "/neo connections [disconnect <server> | signin <server>]",
  usage: "/neo usage [user | all]",
  status: "/neo status",
  tools: "/neo tools",
  approvals: "/neo approvals [list | cancel <approval id>]",
  allow: "/neo allow <user>",
  deny: "/neo deny <user>",
  limit: "/neo limit <user> <amount> [asset]",
  budget: "/neo budget <user> <USD per day | default>",
  compact: "/neo compact [thread link]",
  reload: "/neo reload",
  channel:
    "/neo channel [enabled on|off | mention required|optional | instructions <text>|clear | model <name>|default | tools <server,…>|all|none]",
};

const NAMES = new Set<string>([...USER_COMMANDS, ...ADMIN_COMMANDS]);
const word = z.string().min(1);
const amount = z.string().regex(/^\d+(\.\d+)?$/, "amount must be a plain decimal number like 25 or 0.5");
const asset = z.string().regex(/^[A-Za-z0-9._-]{1,20}$/, "asset must be a short symbol like USDC");

function invalid(command: CommandName, message: string): Command {
  return { name: "invalid", command, message, usage: USAGE[command] };
}

const ALIAS = /^[A-Za-z0-9_-]{1,64}$/;

/** `/neo channel …`: no arguments shows; otherwise one setting and its value. */
function parseChannel(args: string[], restText: string): Command {
  const [setting, value, ...more] = args;
  if (setting === undefined) return { name: "channel" };
  const v = value?.toLowerCase();
  const bad = (why: string) => invalid("channel", why);
  switch (setting.toLowerCase()) {
    case "enabled":
      if ((v !== "on" && v !== "off") || more.length) return bad("enabled takes `on` or `off`");
      return { name: "channel", change: { setting: "enabled", value: v === "on" } };
    case "mention":
      if ((v !== "required" && v !== "optional") || more.length)
        return bad("mention takes `required` or `optional`");
      return { name: "channel", change: { setting: "mention", value: v } };
    case "instructions": {
      const text = restText
        .slice(restText.toLowerCase().indexOf("instructions") + "instructions".length)
        .trim();
      if (!text) return bad("instructions takes the text to add, or `clear`");
      if (text.length > 4000) return bad("instructions are at most 4,000 characters");
      return {
        name: "channel",
        change: { setting: "instructions", value: text.toLowerCase() === "clear" ? null : text },
      };
    }
    case "model":
      if (!value || more.length) return bad("model takes one model name, or `default`");
      return { name: "channel", change: { setting: "model", value: v === "default" ? null : value } };
    case "tools": {
      const list = args
        .slice(1)
        .join(",")
        .split(",")
        .map((a) => a.trim())
        .filter(Boolean);
      if (list.length === 0) return bad("tools takes server names separated by commas, `all` or `none`");
      if (list.length === 1 && list[0]!.toLowerCase() === "all")
        return { name: "channel", change: { setting: "tools", value: null } };
      if (list.length === 1 && list[0]!.toLowerCase() === "none")
        return { name: "channel", change: { setting: "tools", value: [] } };
      const wrong = list.find((a) => !ALIAS.test(a));
      if (wrong) return bad(`"${wrong}" is not a server name (letters, digits, _ and -)`);
      return { name: "channel", change: { setting: "tools", value: list } };
    }
    default:
      return bad(`unknown setting "${setting}"; one of enabled, mention, instructions, model, tools`);
  }
}

export function parseCommand(input: string): Command {
  const text = input.trim();
  const [head = "", ...rest] = text.split(/\s+/);
  const name = head.toLowerCase();
  if (name === "") return { name: "help" };
  if (!NAMES.has(name)) return { name: "unknown", given: head };
  const cmd = name as CommandName;
  const args = rest.filter(Boolean);
  const restText = text.slice(head.length).trim();
  switch (cmd) {
    case "memory":
      if (args.length === 0) return { name: "memory" };
      if (args.length === 1 && args[0]!.toLowerCase() === "export") return { name: "memory", export: true };
      return invalid(cmd, "memory takes nothing, or `export`");
    case "forget": {
      if (args.length === 0) return { name: "forget" };
      const user = word.safeParse(args[0]);
      if (!user.success || args.length !== 1)
        return invalid(cmd, "forget takes nothing, or one user (admins)");
      return { name: "forget", user: user.data };
    }
    case "connections": {
      if (args.length === 0) return { name: "connections" };
      const [action, server] = args;
      const verb = action?.toLowerCase();
      if ((verb === "disconnect" || verb === "signin") && server && ALIAS.test(server) && args.length === 2)
        return verb === "disconnect"
          ? { name: "connections", disconnect: server }
          : { name: "connections", signIn: server };
      return invalid(cmd, "connections takes nothing, `disconnect <server>` or `signin <server>`");
    }
    case "help":
    case "status":
    case "tools":
    case "reload":
      return args.length ? invalid(cmd, `${cmd} takes no arguments`) : { name: cmd };
    case "ask":
      return restText
        ? { name: "ask", text: restText }
        : invalid(cmd, "what should I answer? Add your question");
    case "reset":
    case "compact":
      if (args.length > 1) return invalid(cmd, `${cmd} takes at most one thread link`);
      return args[0] ? { name: cmd, target: args[0] } : { name: cmd };
    case "channel":
      return parseChannel(args, restText);
    case "approvals": {
      const [action = "list", id] = args;
      if (action === "list" && args.length <= 1) return { name: "approvals", action: "list" };
      if (action === "cancel" && id && args.length === 2) return { name: "approvals", action: "cancel", id };
      return invalid(
        cmd,
        action === "cancel" ? "cancel needs exactly one approval id" : `unknown approvals action "${action}"`,
      );
    }
    case "allow":
    case "deny": {
      const user = word.safeParse(args[0]);
      if (!user.success || args.length !== 1) return invalid(cmd, `${cmd} needs exactly one user`);
      return { name: cmd, user: user.data };
    }
    case "usage":
      if (args.length > 1) return invalid(cmd, "usage takes at most one user, or `all`");
      if (args[0] === undefined) return { name: "usage" };
      return args[0].toLowerCase() === "all"
        ? { name: "usage", all: true }
        : { name: "usage", user: args[0] };
    case "budget": {
      if (args.length !== 2)
        return invalid(cmd, "budget needs a user and a daily amount in USD (or `default`)");
      if (args[1]!.toLowerCase() === "default") return { name: "budget", user: args[0]! };
      const a = amount.safeParse(args[1]);
      if (!a.success || Number(a.data) <= 0)
        return invalid(cmd, "the budget must be a USD amount above 0, like 5 or 0.5");
      return { name: "budget", user: args[0]!, usd: Number(a.data) };
    }
    case "limit": {
      if (args.length < 2 || args.length > 3) return invalid(cmd, "limit needs a user and an amount");
      const a = amount.safeParse(args[1]);
      if (!a.success) return invalid(cmd, a.error.issues[0]!.message);
      if (args[2] !== undefined) {
        const s = asset.safeParse(args[2]);
        if (!s.success) return invalid(cmd, s.error.issues[0]!.message);
        return { name: "limit", user: args[0]!, amount: a.data, asset: s.data.toUpperCase() };
      }
      return { name: "limit", user: args[0]!, amount: a.data };
    }
  }
}
