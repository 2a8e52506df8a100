/**
 * Console mode: the same services as server mode (tools, cortex, approvals) driven from the
 * terminal. Approvals are asked on the terminal and decided through the broker like a click.
 */
import { createConsoleApprovalChannel } from "../adapters/console/approval-channel.js";
import { consoleSpeaker, runConsole } from "../adapters/console/run-console.js";
import type { Services } from "./services.js";

export async function runConsoleMode(s: Services): Promise<void> {
  const { cfg } = s;
  const me = consoleSpeaker();
  const servers = s.tools.servers();
  const toolLine = servers.length
    ? ` Tools: ${servers.map((srv) => `${srv.alias} (${srv.status}, ${srv.toolCount})`).join(", ")}.`
    : "";
  // Approvals the last console run left open are closed as interrupted, said on the terminal.
  await s.broker.recoverInterrupted(() =>
    createConsoleApprovalChannel({
      decide: (id, clicker, decision) => s.broker.decide(id, clicker, decision),
      userKey: me.userKey,
      ask: async () => null,
      write: (text) => process.stderr.write(text),
    }),
  );
  await runConsole({
    deps: s.agentDeps,
    approvals: (ask) =>
      createConsoleApprovalChannel({
        decide: (id, clicker, decision) => s.broker.decide(id, clicker, decision),
        userKey: me.userKey,
        ask,
        write: (text) => process.stderr.write(text),
      }),
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    banner:
      `Neo (${cfg.NEO_MAIN_MODEL}${cfg.NEO_CHEAP_MODEL ? ` + ${cfg.NEO_CHEAP_MODEL}` : ""}, store: ${s.store.kind}).` +
      `${toolLine} Type a message. Ctrl-C cancels a turn; Ctrl-C when idle exits.`,
  });
}
