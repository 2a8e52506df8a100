/**
 * The application commands Neo registers. Discord cannot give subcommands their own permissions, so
 * the admin subcommands live in a second command, `/neo-admin`, whose `default_member_permissions` is
 * Manage Server: Discord hides it from everyone else (a server admin can grant it to the configured
 * `NEO_ADMIN_USER_IDS` people in Server Settings → Integrations). Every admin subcommand is also
 * checked at run time by the command layer, whichever command carries it.
 */
import { ApplicationCommandOptionType, PermissionFlagsBits } from "discord.js";

export const USER_COMMAND = "neo";
export const ADMIN_COMMAND = "neo-admin";

interface OptionDef {
  name: string;
  description: string;
  type: ApplicationCommandOptionType;
  required?: boolean;
  choices?: Array<{ name: string; value: string }>;
}

interface SubDef {
  name: string;
  description: string;
  options?: OptionDef[];
}

const STR = ApplicationCommandOptionType.String;
const USER = ApplicationCommandOptionType.User;
const thread: OptionDef = { name: "thread", description: "A thread link (default: this thread)", type: STR };

export const USER_SUBCOMMANDS: SubDef[] = [
  { name: "help", description: "What Neo can do" },
  {
    name: "ask",
    description: "Ask Neo something",
    options: [{ name: "text", description: "Your question", type: STR, required: true }],
  },
  {
    name: "memory",
    description: "What Neo remembers about you, to forget or show elsewhere (only you see it)",
    options: [
      {
        name: "action",
        description: "export: everything Neo holds about you, as a JSON file",
        type: STR,
        choices: [{ name: "export", value: "export" }],
      },
    ],
  },
  {
    name: "forget",
    description: "Wipe what Neo remembers about you (asks to confirm)",
    options: [{ name: "user", description: "Admins: wipe what Neo remembers about this user", type: USER }],
  },
  { name: "reset", description: "Start this thread over", options: [thread] },
  {
    name: "usage",
    description: "Your model usage and cost, today and this month",
    options: [
      { name: "user", description: "Admins: someone else's usage", type: USER },
      {
        name: "scope",
        description: "Admins: the whole deployment",
        type: STR,
        choices: [{ name: "all", value: "all" }],
      },
    ],
  },
  {
    name: "connections",
    description: "The tool servers you are signed in to (only you see it)",
    options: [
      {
        name: "action",
        description: "disconnect: sign out of a server; signin: a new sign-in link",
        type: STR,
        choices: [
          { name: "disconnect", value: "disconnect" },
          { name: "signin", value: "signin" },
        ],
      },
      { name: "server", description: "The server to sign out of or in to", type: STR },
    ],
  },
];

export const ADMIN_SUBCOMMANDS: SubDef[] = [
  { name: "status", description: "Models, store, MCP servers, threads, queue, pending approvals" },
  { name: "tools", description: "Natural and Escalate tools" },
  {
    name: "approvals",
    description: "List or cancel pending approvals",
    options: [
      {
        name: "action",
        description: "list (default) or cancel",
        type: STR,
        choices: [
          { name: "list", value: "list" },
          { name: "cancel", value: "cancel" },
        ],
      },
      { name: "id", description: "Approval id (for cancel)", type: STR },
    ],
  },
  {
    name: "allow",
    description: "Let a user use Neo again",
    options: [{ name: "user", description: "Who", type: USER, required: true }],
  },
  {
    name: "deny",
    description: "Stop a user from using Neo",
    options: [{ name: "user", description: "Who", type: USER, required: true }],
  },
  {
    name: "limit",
    description: "Set a user's spend cap",
    options: [
      { name: "user", description: "Who", type: USER, required: true },
      { name: "amount", description: "Cap, e.g. 25 or 0.5", type: STR, required: true },
      { name: "asset", description: "Asset symbol, e.g. USDC", type: STR },
    ],
  },
  {
    name: "budget",
    description: "Set a user's daily model budget in USD",
    options: [
      { name: "user", description: "Who", type: USER, required: true },
      { name: "usd", description: "USD per day, e.g. 5 or 0.5, or default", type: STR, required: true },
    ],
  },
  { name: "compact", description: "Compact this thread's transcript now", options: [thread] },
  { name: "reload", description: "Restart the MCP servers" },
  {
    name: "channel",
    description: "This channel's settings (no option: show them)",
    options: [
      {
        name: "setting",
        description: "What to change",
        type: STR,
        choices: ["enabled", "mention", "instructions", "model", "tools"].map((c) => ({ name: c, value: c })),
      },
      {
        name: "value",
        description: "on|off, required|optional, text|clear, model|default, servers|all|none",
        type: STR,
      },
    ],
  },
];

const sub = (s: SubDef) => ({
  type: ApplicationCommandOptionType.Subcommand,
  ...s,
  options: s.options ?? [],
});

/** The bodies `PUT /applications/{app}/commands` takes. */
export function commandDefinitions(): Array<Record<string, unknown>> {
  return [
    {
      name: USER_COMMAND,
      description: "Talk to Neo",
      type: 1,
      options: USER_SUBCOMMANDS.map(sub),
    },
    {
      name: ADMIN_COMMAND,
      description: "Neo administration",
      type: 1,
      default_member_permissions: String(PermissionFlagsBits.ManageGuild),
      // Guild only: Manage Server means nothing in a DM.
      contexts: [0],
      options: ADMIN_SUBCOMMANDS.map(sub),
    },
  ];
}

/** Option names of a subcommand in the order the command layer's text form expects them. */
export function optionOrder(subcommand: string): string[] {
  const def = [...USER_SUBCOMMANDS, ...ADMIN_SUBCOMMANDS].find((s) => s.name === subcommand);
  return (def?.options ?? []).map((o) => o.name);
}
