/** Run a parsed {@link Command} against {@link CommandDeps}. Every reply is for the caller only. */

import type { ApprovalRecord } from "../approvals/types.js";
import { describeChannel } from "../channels/index.js";
import { cortexOwner, parseUserKey, type UserKey } from "../keys.js";
import { log } from "../log.js";
import { ErasureIncompleteError } from "../user-data.js";
import { connections } from "./connections.js";
import { helpText } from "./help.js";
import { exportReply, memoryPage } from "./memory.js";
import { USAGE } from "./parse.js";
import {
  ADMIN_COMMANDS,
  type Command,
  type CommandContext,
  type CommandDeps,
  type CommandReply,
  type ConfirmRequest,
} from "./types.js";

const reply = (text: string, confirm?: ConfirmRequest): CommandReply =>
  confirm ? { kind: "reply", text, ephemeral: true, confirm } : { kind: "reply", text, ephemeral: true };

async function channelLines(deps: CommandDeps): Promise<string[]> {
  const all = await deps.channels.list();
  if (all.length === 0) return ["• Channel settings: none (every channel has the defaults)"];
  return [
    `• Channel settings (${all.length}):`,
    ...all.map((c) => `    • \`${c.ref}\` ${describeChannel(c.settings)}`),
  ];
}

function approvalLine(r: ApprovalRecord): string {
  const spend = r.plan.actions
    .flatMap((a) =>
      a.spend
        ? [`${a.spend.amount} ${a.spend.asset}${a.spend.recipient ? ` → ${a.spend.recipient}` : ""}`]
        : [],
    )
    .join(", ");
  const mins = Math.max(0, Math.round((r.expiresAt - Date.now()) / 60_000));
  return `• \`${r.id}\` ${r.requester.displayName}: ${r.plan.summary}${spend ? ` (${spend})` : ""}, expires in ${mins} min`;
}

/** Whether running `cmd` takes an admin: the admin subcommands, and `usage` of someone else or all. */
export function needsAdmin(cmd: Command): boolean {
  if (cmd.name === "usage") return Boolean(cmd.user || cmd.all);
  if (cmd.name === "forget") return cmd.user !== undefined;
  return (ADMIN_COMMANDS as readonly string[]).includes(cmd.name);
}

export async function runCommand(
  cmd: Command,
  ctx: CommandContext,
  deps: CommandDeps,
): Promise<CommandReply> {
  if (cmd.name === "unknown") return reply(`I don't know \`${cmd.given}\`.\n\n${helpText(ctx.isAdmin)}`);
  if (cmd.name === "invalid") return reply(`That didn't work: ${cmd.message}.\nUsage: \`${cmd.usage}\``);
  if (cmd.name === "usage" && needsAdmin(cmd) && !ctx.isAdmin) {
    return reply("Only Neo admins can see another user's usage or the totals; `/neo usage` shows yours.");
  }
  if (needsAdmin(cmd) && !ctx.isAdmin) {
    return reply(`\`/neo ${cmd.name}\` is for Neo admins only, and you are not one. Ask a workspace admin.`);
  }
  try {
    return await runAllowed(cmd, ctx, deps);
  } catch (err) {
    log.warn({ err, command: cmd.name, caller: ctx.caller }, "command failed");
    return reply(`\`/neo ${cmd.name}\` failed: ${(err as Error).message}`);
  }
}

async function runAllowed(cmd: Command, ctx: CommandContext, deps: CommandDeps): Promise<CommandReply> {
  switch (cmd.name) {
    case "help":
      return reply(helpText(ctx.isAdmin));
    case "ask": {
      // A channel turned off answers nothing, not even `/neo ask`; the caller is told why, once.
      const here = ctx.channel ? await deps.channels.get(ctx.channel) : undefined;
      if (here && !here.enabled) {
        return reply("Neo is turned off in this channel (an admin ran `/neo channel enabled off`).");
      }
      return { kind: "ask", text: cmd.text };
    }
    case "channel": {
      if (!ctx.channel) return reply("Run `/neo channel` in the channel it should apply to (not in a DM).");
      if (cmd.change?.setting === "model" && cmd.change.value) {
        const problem = deps.channels.modelProblem(cmd.change.value);
        if (problem) return reply(`Not changed: ${problem}`);
      }
      const s = cmd.change
        ? await deps.channels.change(ctx.channel, cmd.change)
        : await deps.channels.get(ctx.channel);
      const head = cmd.change ? "Changed; from the next turn on this channel is" : "This channel is";
      return reply(`${head}: ${describeChannel(s)}.`);
    }
    case "connections":
      return reply(await connections(deps, ctx.caller, cmd.disconnect, cmd.signIn));
    case "memory":
      return cmd.export ? exportReply(ctx, deps) : { kind: "memory", view: await memoryPage(ctx, deps, 0) };
    case "forget": {
      if (!cmd.user)
        return reply("This wipes everything I remember about you, for good. Sure?", {
          action: "forget",
          label: "Forget everything",
        });
      const user = ctx.resolveUser(cmd.user);
      if (!user) return reply(`I can't tell who \`${cmd.user}\` is. Mention them, or give their user id.`);
      return reply(`This wipes everything I remember about \`${user}\`, for good. Sure?`, {
        action: `${FORGET_USER}${user}`,
        label: "Forget everything about them",
      });
    }
    case "reset":
    case "compact": {
      const conv = ctx.resolveConversation(cmd.target);
      if (!conv)
        return reply(`Which thread? Run \`${USAGE[cmd.name]}\` with a link to the thread's first message.`);
      if (cmd.name === "reset") {
        // A thread's reset belongs to the people who spoke in it, and to admins.
        if (!ctx.isAdmin && !(await deps.conversations.spokeIn(conv, ctx.caller))) {
          return reply("Not reset: only the people who spoke in that thread, and admins, can start it over.");
        }
        // Its open approvals close as cancelled by the caller (not as the requester's decision).
        await deps.approvals.cancelConversation(conv, ctx.caller, "the thread was reset");
        await deps.conversations.reset(conv);
        return reply("Done: that thread starts over with your next message.");
      }
      await deps.conversations.compact(conv);
      return reply("Done: that thread's transcript is compacted.");
    }
    case "status": {
      const m = deps.system.models();
      const s = await deps.system.store();
      const st = deps.conversations.stats();
      const servers = deps.tools.servers();
      const pending = await deps.approvals.pending();
      const lines = [
        "*Neo status*",
        `• Models: main \`${m.main}\`, cheap \`${m.cheap}\``,
        `• Store: ${s.kind}, ${s.healthy ? "healthy" : "UNREACHABLE"}${s.size ? `, ${s.size.keys} keys, ${(s.size.bytes / 2 ** 20).toFixed(1)} MiB${s.kind === "redis" ? " (the server's used memory)" : " on disk"}` : ""}`,
        `• Retention: idle conversations are deleted after ${s.retention.conversationDays} day(s); approval records and audit after ${s.retention.auditDays} day(s); usage as daily counts for 35 days, monthly for 13 months; memory ${s.retention.memoryDays === undefined ? "until the person forgets it" : `not learned or reinforced for ${s.retention.memoryDays} day(s) is dropped`}`,
        `• Threads: ${st.active} active, ${st.running} running, ${st.queued} queued messages, ${st.waitingForSlot} waiting for a slot, ${st.throttledUsers} user(s) over their turn rate`,
        `• Pending approvals: ${pending.length}`,
        `• MCP servers (${servers.length}):`,
        ...servers.map(
          (v) =>
            `    • \`${v.name}\` ${v.ok ? `up, ${v.tools} tools` : "DOWN"}${v.warning ? ` — ${v.warning}` : ""}`,
        ),
        await deps.usage.statusLines(),
        ...(await channelLines(deps)),
      ];
      return reply(lines.join("\n"));
    }
    case "tools": {
      const t = deps.tools.list();
      const fmt = (xs: string[]) => (xs.length ? xs.map((x) => `\`${x}\``).join(", ") : "none");
      return reply(
        `*Natural* (${t.natural.length}): ${fmt(t.natural)}\n*Escalate* (${t.escalate.length}, approval only): ${fmt(t.escalate)}`,
      );
    }
    case "approvals": {
      if (cmd.action === "list") {
        const pending = await deps.approvals.pending();
        return reply(
          pending.length
            ? `*Pending approvals*\n${pending.map(approvalLine).join("\n")}`
            : "No approvals are pending.",
        );
      }
      const res = await deps.approvals.cancel(cmd.id, ctx.caller);
      return reply(
        res.ok ? `Cancelled approval \`${cmd.id}\`; nothing will run.` : `Not cancelled: ${res.message}`,
      );
    }
    case "allow":
    case "deny": {
      const user = ctx.resolveUser(cmd.user);
      if (!user) return reply(`I can't tell who \`${cmd.user}\` is. Mention them, or give their user id.`);
      if (cmd.name === "allow") {
        await deps.access.allow(user, ctx.caller);
        return reply(`${cmd.user} may use Neo.`);
      }
      await deps.access.deny(user, ctx.caller);
      const revoked = await deps.approvals.revokeUser(user, ctx.caller, "Neo access withdrawn by an admin");
      // Nor does Neo keep acting as them on tool servers: their sign-ins are revoked and deleted.
      const signedIn = deps.connections
        ? (await deps.connections.list(cortexOwner(user))).map((c) => c.server)
        : [];
      if (deps.connections) await deps.connections.erase(user);
      return reply(
        `${cmd.user} may no longer use Neo.${revoked ? ` Revoked ${revoked} pending approval(s) of theirs; nothing of them will run.` : ""}${signedIn.length ? ` Signed them out of ${signedIn.map((s) => `\`${s}\``).join(", ")} (tokens deleted, and revoked where the server supports that).` : ""}`,
      );
    }
    case "usage": {
      if (cmd.all) return reply(`*Usage of this deployment*\n${await deps.usage.totals()}`);
      const user = cmd.user ? ctx.resolveUser(cmd.user) : ctx.caller;
      if (!user) return reply(`I can't tell who \`${cmd.user}\` is. Mention them, or give their user id.`);
      const title = cmd.user ? `*Usage of \`${user}\`*` : "*Your usage*";
      return reply(`${title}\n${await deps.usage.report(user)}`);
    }
    case "budget": {
      const user = ctx.resolveUser(cmd.user);
      if (!user) return reply(`I can't tell who \`${cmd.user}\` is. Mention them, or give their user id.`);
      return reply(await deps.usage.setBudget(user, cmd.usd));
    }
    case "limit": {
      const user = ctx.resolveUser(cmd.user);
      if (!user) return reply(`I can't tell who \`${cmd.user}\` is. Mention them, or give their user id.`);
      await deps.caps.setLimit(user, cmd.amount, cmd.asset, ctx.caller);
      // Pending approvals were offered under the old cap: they close, the user asks again.
      const revoked = await deps.approvals.revokeUser(user, ctx.caller, "spend cap changed by an admin");
      const what = cmd.asset
        ? `${cmd.amount} ${cmd.asset}`
        : `${cmd.amount} in the default cap unit (NEO_CAP_UNIT), every asset valued in it`;
      return reply(
        `${cmd.user}'s spend cap is now ${what}, per 24 hours.${revoked ? ` Revoked ${revoked} pending approval(s) of theirs.` : ""}`,
      );
    }
    case "unknown":
    case "invalid":
      return reply(helpText(ctx.isAdmin));
    case "reload": {
      const warnings = await deps.tools.reload();
      return reply(
        warnings.length
          ? `Reloaded, with warnings:\n${warnings.map((w) => `• ${w}`).join("\n")}`
          : "Reloaded the MCP servers.",
      );
    }
  }
}

/** Run the action behind a confirm button the caller pressed. */
export async function runConfirmed(
  action: string,
  ctx: CommandContext,
  deps: CommandDeps,
): Promise<CommandReply> {
  if (action === "forget") {
    const n = await erasing(() => deps.memory.forget(ctx.caller, ctx.caller));
    if (typeof n === "string") return reply(n);
    return reply(n > 0 ? `Forgotten: ${n} record(s) about you are gone.` : "There was nothing to forget.");
  }
  const target = action.startsWith(FORGET_USER) ? userKeyIn(action.slice(FORGET_USER.length)) : undefined;
  if (!target) return reply("That button no longer does anything.");
  // The button is platform input: whoever presses it must be an admin now, whatever the reply said.
  if (!ctx.isAdmin) return reply("Only Neo admins can erase another user's memory; nothing was changed.");
  const n = await erasing(() => deps.memory.forget(target, ctx.caller));
  if (typeof n === "string") return reply(n);
  log.info({ admin: ctx.caller, erased: target, records: n }, "admin erased a user's memory");
  return reply(
    n > 0
      ? `Forgotten: ${n} record(s) about \`${target}\` are gone.`
      : "There was nothing to forget about them.",
  );
}

/** An erasure's count, or what to tell the caller when part of it could not be done now. */
async function erasing(fn: () => Promise<number>): Promise<number | string> {
  try {
    return await fn();
  } catch (err) {
    if (!(err instanceof ErasureIncompleteError)) throw err;
    log.warn({ parts: err.parts }, "erasure incomplete");
    return `Not everything could be erased yet (${err.parts.map((p) => p.split(" (")[0]).join(", ")}); the rest is gone. Run \`/neo forget\` again in a minute to finish.`;
  }
}

/** A user key from a button's value, or undefined when it is not one Neo makes. */
function userKeyIn(raw: string): UserKey | undefined {
  if (!/^[a-z]+:[A-Za-z0-9@_.-]{1,64}:[A-Za-z0-9_.-]{1,64}$/.test(raw)) return undefined;
  try {
    parseUserKey(raw);
    return raw;
  } catch {
    return undefined;
  }
}

/** The confirm action of an admin's `/neo forget <user>`, followed by the user key. */
const FORGET_USER = "forget:";
