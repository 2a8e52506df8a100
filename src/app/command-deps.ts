/** Adapts the process's services to the shape the `/neo` commands act on. */
import type { CommandDeps } from "../core/commands/types.js";
import type { Conversations } from "../core/conversations/types.js";
import { redact } from "../core/log.js";
import type { OAuthConnections } from "../core/tools/oauth/sign-in-types.js";
import { eraseUser } from "../core/user-data.js";
import type { Services } from "./services.js";

/** `/neo connections` (and a deny's sign-out) over the OAuth connections. */
export function connectionCommands(oauth: OAuthConnections): NonNullable<CommandDeps["connections"]> {
  return {
    list: (u) => oauth.connected(u),
    disconnect: (u, server) => oauth.disconnect(u, server),
    erase: (u) => oauth.eraseTokens(u),
    signInLink: (u, server) => oauth.signInLink(u, server),
  };
}

export function commandDeps(
  s: Services,
  conversations: Pick<Conversations, "reset" | "spokeIn" | "compact" | "stats" | "erase">,
): CommandDeps {
  const { cfg, tools, oauth } = s;
  return {
    conversations,
    memory: {
      list: (u) => s.memory.list(u),
      forgetOne: (u, id) => s.memory.forgetOne(u, id),
      setEverywhere: (u, id, everywhere) => s.memory.setEverywhere(u, id, everywhere),
      forget: (u, by) =>
        eraseUser(
          {
            store: s.store,
            forgetMemory: (x) => s.memory.forget(x),
            approvals: s.broker,
            tools,
            conversations,
          },
          u,
          by,
        ),
      export: (u) => s.memory.export(u),
    },
    connections: oauth && connectionCommands(oauth),
    tools: {
      list: () => {
        const all = tools.tools();
        return {
          natural: all.filter((t) => t.class === "natural").map((t) => t.name),
          escalate: all.filter((t) => t.class === "escalate").map((t) => t.name),
        };
      },
      servers: () => {
        const warnings = tools.warnings();
        return tools.servers().map((srv) => {
          const last = [...warnings].reverse().find((w) => w.server === srv.alias);
          // A server's error may quote its URL; what an admin is shown is cleaned like a log line.
          const warning = srv.error ?? last?.message;
          return {
            name: srv.alias,
            ok: srv.status === "ready" || srv.status === "disabled",
            tools: srv.toolCount,
            ...(warning ? { warning: redact(warning) } : {}),
          };
        });
      },
      reload: async () => {
        await tools.reload();
        return tools.warnings().map((w) => redact(`${w.server}: ${w.message}`));
      },
    },
    approvals: {
      pending: () => s.broker.listPending(),
      cancel: (id, by) => s.broker.cancel(id, by),
      revokeUser: (user, by, note) => s.broker.revokeUser(user, by, note),
      cancelConversation: (conv, by, note) => s.broker.cancelConversation(conv, by, note),
    },
    access: s.access,
    caps: {
      setLimit: (user, amount, asset, by) => s.caps.setCap(user, asset ?? cfg.NEO_CAP_UNIT, amount, by),
    },
    channels: {
      get: (ref) => s.channels.get(ref),
      change: (ref, c) => s.channels.change(ref, c),
      list: () => s.channels.list(),
      // Budgets count cost from NEO_MODEL_PRICES: with prices set, a model without one would spend uncounted.
      modelProblem: (model) =>
        cfg.NEO_MODEL_PRICES && !cfg.NEO_MODEL_PRICES[model]
          ? `\`${model}\` has no price in NEO_MODEL_PRICES, so its cost could not be counted`
          : undefined,
    },
    usage: {
      report: (u) => s.usage.report(u),
      totals: () => s.usage.totals(),
      statusLines: () => s.usage.statusLines(),
      setBudget: (u, usd) => s.usage.setBudget(u, usd),
    },
    system: {
      models: () => ({ main: cfg.NEO_MAIN_MODEL, cheap: cfg.NEO_CHEAP_MODEL ?? cfg.NEO_MAIN_MODEL }),
      store: async () => ({
        kind: s.store.kind,
        healthy: s.store.healthy(),
        ...(s.store.healthy() ? { size: await s.store.size() } : {}),
        retention: {
          conversationDays: cfg.NEO_CONVERSATION_RETENTION_DAYS,
          auditDays: cfg.NEO_AUDIT_RETENTION_DAYS,
          memoryDays: cfg.NEO_MEMORY_RETENTION_DAYS,
        },
      }),
    },
  };
}
