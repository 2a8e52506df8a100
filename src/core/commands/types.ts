/**
 * The platform-free `/neo` command layer, shared by the Slack and Discord adapters.
 *
 * Flow: the adapter hands the text after `/neo` to {@link parseCommand} → a typed {@link Command}
 * (or an `invalid` one that says why) → {@link runCommand} with a {@link CommandContext} (who is
 * calling, are they an admin, how to resolve user and thread references on this platform) and the
 * {@link CommandDeps} (the services the commands act on) → a {@link CommandReply} the adapter renders:
 * - `reply`: Markdown text, always shown only to the caller (ephemeral), optionally with a confirm
 *   button; when pressed, the adapter calls {@link runConfirmed} with the button's `action`;
 * - `ask`: the adapter runs a turn with `text` (the answer posted, the status shown ephemerally).
 *
 * Unknown subcommands get the help text; admin subcommands run by a non-admin get a refusal saying
 * why. Nothing here talks to a platform.
 */
import type { AccessPolicy } from "../access/policy.js";
import type { ApprovalRecord, DecideResult } from "../approvals/types.js";
import type { ChannelChange, ChannelRef, ChannelSettingsStore } from "../channels/index.js";
import type { ConversationStats } from "../conversations/types.js";
import type { ConversationKey, UserKey } from "../keys.js";
import type { MemoryItem, MemoryPage } from "./memory-view.js";

/** Subcommands everyone may run. */
export const USER_COMMANDS = ["help", "ask", "memory", "forget", "reset", "usage", "connections"] as const;
/** Subcommands only admins may run. */
export const ADMIN_COMMANDS = [
  "status",
  "tools",
  "approvals",
  "allow",
  "deny",
  "limit",
  "budget",
  "compact",
  "reload",
  "channel",
] as const;

export type CommandName = (typeof USER_COMMANDS)[number] | (typeof ADMIN_COMMANDS)[number];

/** A parsed `/neo` invocation. `target` is a platform thread reference (a link), resolved by the context. */
export type Command =
  | { name: "help" }
  | { name: "ask"; text: string }
  /** The caller's memory, editable; `export`: everything Neo holds about them, as a JSON file. */
  | { name: "memory"; export?: true }
  /** Everything about the caller; `user` (admins): everything about that user. */
  | { name: "forget"; user?: string }
  | { name: "reset"; target?: string }
  /** The caller's sign-ins to per-person OAuth tool servers; `disconnect`: sign out of that server. */
  | { name: "connections"; disconnect?: string; signIn?: string }
  /** Own usage; `user` (admins): someone else's; `all` (admins): the deployment's totals. */
  | { name: "usage"; user?: string; all?: true }
  | { name: "status" }
  | { name: "tools" }
  | { name: "approvals"; action: "list" }
  | { name: "approvals"; action: "cancel"; id: string }
  | { name: "allow"; user: string }
  | { name: "deny"; user: string }
  | { name: "limit"; user: string; amount: string; asset?: string }
  /** A user's daily USD budget; undefined `usd` = back to the default. */
  | { name: "budget"; user: string; usd?: number }
  | { name: "compact"; target?: string }
  | { name: "reload" }
  /** The settings of the channel the command runs in: shown, or one of them changed. */
  | { name: "channel"; change?: ChannelChange }
  /** Known subcommand, bad arguments: `message` says what was wrong, `usage` how to call it. */
  | { name: "invalid"; command: CommandName; message: string; usage: string }
  /** Not a subcommand: answered with the help text. */
  | { name: "unknown"; given: string };

/** Who is calling and how this platform resolves references. Built by the adapter per invocation. */
export interface CommandContext {
  caller: UserKey;
  /** Configured admin ids or the platform's own admin notion (Slack admin/owner, Discord Manage Server). */
  isAdmin: boolean;
  /** A user argument (`<@U123>`, `@name`, an id) → that user's key, or undefined if it names nobody. */
  resolveUser(raw: string): UserKey | undefined;
  /**
   * The conversation a thread-scoped command (`reset`, `compact`) acts on: `target` when given (a
   * thread link), else the thread the command was run in. Undefined when neither names one.
   */
  resolveConversation(target?: string): ConversationKey | undefined;
  /** The channel the command was run in (a thread's parent channel); undefined in a DM. */
  channel?: ChannelRef | undefined;
  /** Records on one page of `/neo memory` (default 10; Discord: 4, one row of buttons each). */
  memoryPageSize?: number;
}

/** One MCP server as `/neo status` reports it. */
export interface ServerStatus {
  name: string;
  ok: boolean;
  tools: number;
  warning?: string;
}

/** The services commands act on; `src/main.ts` adapts the real ones to this shape. */
export interface CommandDeps {
  conversations: {
    reset(conversation: ConversationKey): Promise<void>;
    /** Whether `user` has spoken in the conversation (a reset is theirs, or an admin's). */
    spokeIn(conversation: ConversationKey, user: UserKey): Promise<boolean>;
    compact(conversation: ConversationKey): Promise<void>;
    stats(): ConversationStats;
  };
  /** The caller's cortex. */
  memory: {
    /** Every record Neo keeps about `user`, newest first. */
    list(user: UserKey): Promise<MemoryItem[]>;
    /** Forget one of `user`'s records; false when they have none with that id. */
    forgetOne(user: UserKey, id: string): Promise<boolean>;
    /** Show one of `user`'s records everywhere, or only where learned; false when unknown. */
    setEverywhere(user: UserKey, id: string, everywhere: boolean): Promise<boolean>;
    /**
     * Erase `user` (`/neo forget`; `by` is who asked: them, or an admin): cortex and recalled turns,
     * usage counts, pending approvals closed (`core/user-data.ts`). Resolves with how many records
     * and turns were removed.
     */
    forget(user: UserKey, by: UserKey): Promise<number>;
    /** Everything Neo holds about `user` (`/neo memory export`), ready for JSON. */
    export(user: UserKey): Promise<unknown>;
  };
  tools: {
    /** Advertised (Natural) and gated (Escalate) tool names. */
    list(): { natural: string[]; escalate: string[] };
    servers(): ServerStatus[];
    /** Restart the MCP servers; resolves with the start-up warnings. */
    reload(): Promise<string[]>;
  };
  approvals: {
    pending(): Promise<ApprovalRecord[]>;
    cancel(approvalId: string, by: UserKey): Promise<DecideResult>;
    /** Close `user`'s pending approvals as `by` (deny, cap change); resolves with how many. */
    revokeUser(user: UserKey, by: UserKey, note: string): Promise<number>;
    /** Close a conversation's pending approvals as `by` (reset). */
    cancelConversation(conversation: ConversationKey, by: UserKey, note: string): Promise<number>;
  };
  access: Pick<AccessPolicy, "allow" | "deny">;
  caps: {
    /** Set `user`'s spend cap; `asset` undefined = every asset without a cap of its own. */
    setLimit(user: UserKey, amount: string, asset: string | undefined, by: UserKey): Promise<void>;
  };
  /** Per-channel settings (`createChannelSettings`). */
  channels: Pick<ChannelSettingsStore, "get" | "change" | "list"> & {
    /** Why `model` cannot be a channel's model (e.g. no price while budgets count cost); undefined = it can. */
    modelProblem(model: string): string | undefined;
  };
  /** Durable usage and USD budgets (`createUsageTracker`). */
  usage: {
    /** One user's usage today and this month, with their budget (Markdown bullets). */
    report(user: UserKey): Promise<string>;
    /** The deployment's totals and top users (Markdown bullets). */
    totals(): Promise<string>;
    /** The usage lines of `status`. */
    statusLines(): Promise<string>;
    /** Set or clear a user's daily USD budget; the reply text. */
    setBudget(user: UserKey, usd: number | undefined): Promise<string>;
  };
  /** Per-person OAuth sign-ins (`OAuthConnections`); undefined when the manifest has no such servers. */
  connections?:
    | {
        /** The servers `user` is signed in to, each with the account it connected when known. */
        list(user: UserKey): Promise<{ server: string; account: string | undefined }[]>;
        /** Revoke (where the server supports it) and delete `user`'s tokens for `server`. */
        disconnect(user: UserKey, server: string): Promise<void>;
        /** Revoke and delete every sign-in of `user`'s person (an admin's deny). */
        erase(user: UserKey): Promise<void>;
        /**
         * A new sign-in link to `server` for `user` (they asked: one sent earlier is void); "signed-in"
         * when they are; undefined when `server` is no per-person OAuth server.
         */
        signInLink(user: UserKey, server: string): Promise<string | "signed-in" | undefined>;
      }
    | undefined;
  system: {
    models(): { main: string; cheap: string };
    /**
     * The store, what it holds (live keys, bytes: `Store.size`; absent while it is unreachable) and
     * how long each kind of data is kept (days; memory undefined = until the person forgets it).
     */
    store(): Promise<{
      kind: string;
      healthy: boolean;
      size?: { keys: number; bytes: number };
      retention: { conversationDays: number; auditDays: number; memoryDays?: number | undefined };
    }>;
  };
}

/** A confirm button the adapter renders under a reply; pressing it calls `runConfirmed(action)`. */
export interface ConfirmRequest {
  /** `forget` (the caller), or `forget:<user key>` (an admin's forget of that user). */
  action: string;
  label: string;
}

export type CommandReply =
  | { kind: "reply"; text: string; ephemeral: true; confirm?: ConfirmRequest }
  | { kind: "ask"; text: string }
  /** A page of the caller's memory; the adapter adds the buttons (`memory-view.ts`). */
  | { kind: "memory"; view: MemoryPage }
  /** A file for the caller only (the export), with a line to go with it. */
  | { kind: "file"; text: string; file: { name: string; bytes: Uint8Array } };

/** The platform could not resolve or run a command for an expected reason (shown to the caller). */
export class CommandError extends Error {
  readonly code = "COMMAND_REFUSED";
}
