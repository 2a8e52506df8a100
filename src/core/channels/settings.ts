/**
 * Per-channel settings (`/neo channel …`, admins): whether Neo answers there at all, whether a
 * message must mention it, extra instructions, the main model and the tool servers it may use. Kept
 * in the store per `platform:workspace:channel` (a Discord thread belongs to its parent channel), so
 * every instance applies them from the next turn on. A channel with nothing stored has the defaults.
 */
import { z } from "zod";
import type { Store } from "../../store/types.js";
import { type ConversationKey, channelKey, parseConversationKey } from "../keys.js";
import { log } from "../log.js";

/** `platform:workspace:channel`, the channel part of conversation keys. */
export type ChannelRef = string;

export const channelSettingsSchema = z.object({
  enabled: z.boolean().default(true),
  mention: z.enum(["required", "optional"]).default("required"),
  /** Added to the system block of every turn in the channel. */
  instructions: z.string().min(1).max(4000).optional(),
  /** The main model for the channel's turns; unset = `NEO_MAIN_MODEL`. */
  model: z.string().min(1).optional(),
  /** MCP server aliases whose tools the channel's turns may use; unset = all. */
  tools: z.array(z.string().min(1)).optional(),
});
export type ChannelSettings = z.infer<typeof channelSettingsSchema>;

export const DEFAULT_CHANNEL_SETTINGS: ChannelSettings = { enabled: true, mention: "required" };

/** One `/neo channel` change; `null` clears a setting back to its default. */
export type ChannelChange =
  | { setting: "enabled"; value: boolean }
  | { setting: "mention"; value: "required" | "optional" }
  | { setting: "instructions"; value: string | null }
  | { setting: "model"; value: string | null }
  | { setting: "tools"; value: string[] | null };

/** The channel a conversation runs in. */
export function channelOf(conversation: ConversationKey): ChannelRef {
  return channelKey(parseConversationKey(conversation));
}

const PREFIX = "channel:settings:";

export interface ChannelSettingsStore {
  /** The channel's settings (the defaults when none are stored, or the stored ones are unreadable). */
  get(ref: ChannelRef): Promise<ChannelSettings>;
  /** Apply one change; resolves with the new settings. */
  change(ref: ChannelRef, change: ChannelChange): Promise<ChannelSettings>;
  /** Channels with settings of their own. */
  list(): Promise<Array<{ ref: ChannelRef; settings: ChannelSettings }>>;
}

export function createChannelSettings(store: Store): ChannelSettingsStore {
  const get = async (ref: ChannelRef): Promise<ChannelSettings> => {
    const raw = await store.get<unknown>(`${PREFIX}${ref}`);
    if (raw === undefined) return { ...DEFAULT_CHANNEL_SETTINGS };
    const parsed = channelSettingsSchema.safeParse(raw);
    if (parsed.success) return parsed.data;
    log.warn(
      { channel: ref, err: parsed.error.issues[0]?.message },
      "unreadable channel settings; using the defaults",
    );
    return { ...DEFAULT_CHANNEL_SETTINGS };
  };
  return {
    get,
    async change(ref, c) {
      const next: ChannelSettings = { ...(await get(ref)) };
      if (c.setting === "enabled") next.enabled = c.value;
      else if (c.setting === "mention") next.mention = c.value;
      else if (c.value === null) delete next[c.setting];
      else if (c.setting === "tools") next.tools = c.value;
      else next[c.setting] = c.value;
      await store.set(`${PREFIX}${ref}`, next);
      return next;
    },
    async list() {
      const keys = (await store.keys(PREFIX)).sort();
      return Promise.all(
        keys.map(async (k) => ({ ref: k.slice(PREFIX.length), settings: await get(k.slice(PREFIX.length)) })),
      );
    },
  };
}

/** `enabled, mention required, model gpt-4o, tools fs, instructions "…"` for `/neo channel` and status. */
export function describeChannel(s: ChannelSettings): string {
  const parts = [
    s.enabled ? "enabled" : "DISABLED (no answers)",
    `mention ${s.mention}`,
    `model ${s.model ? `\`${s.model}\`` : "default"}`,
    `tools ${s.tools ? (s.tools.length ? s.tools.map((t) => `\`${t}\``).join(", ") : "none") : "all"}`,
    s.instructions
      ? `instructions: “${s.instructions.length > 200 ? `${s.instructions.slice(0, 199)}…` : s.instructions}”`
      : "no instructions",
  ];
  return parts.join(", ");
}
