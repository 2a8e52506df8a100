/**
 * Conversation and user keys. A conversation key names one agent transcript, a user key names one
 * cortex. Both are colon-separated; each part is percent-encoded so ids containing ':' round-trip,
 * and so they never contain the braces of a hash tag (`hashTag`).
 */

export type Platform = "discord" | "slack" | "console";

/** `platform:workspace:channel:thread` — one key, one agent transcript. */
export type ConversationKey = string;

/** `platform:workspace:user` — one key, one cortex. */
export type UserKey = string;

export interface ConversationParts {
  platform: Platform;
  workspace: string;
  channel: string;
  thread: string;
}

export interface UserParts {
  platform: Platform;
  workspace: string;
  user: string;
}

const PLATFORMS: readonly Platform[] = ["discord", "slack", "console"];

// Ids almost never hold these characters: testing first keeps four replaces off every key built.
const NEEDS_ENCODING = /[%:{}]/;

function enc(part: string): string {
  if (!NEEDS_ENCODING.test(part)) return part;
  return part.replace(/%/g, "%25").replace(/:/g, "%3A").replace(/\{/g, "%7B").replace(/\}/g, "%7D");
}

function dec(part: string): string {
  if (!part.includes("%")) return part;
  return part.replace(/%3A/g, ":").replace(/%7B/g, "{").replace(/%7D/g, "}").replace(/%25/g, "%");
}

function platformOf(raw: string, key: string): Platform {
  const p = raw as Platform;
  if (!PLATFORMS.includes(p)) throw new KeyError(`unknown platform "${raw}" in key "${key}"`);
  return p;
}

export class KeyError extends Error {
  readonly code = "BAD_KEY";
}

export function conversationKey(p: ConversationParts): ConversationKey {
  return `${enc(p.platform)}:${enc(p.workspace)}:${enc(p.channel)}:${enc(p.thread)}`;
}

/** `platform:workspace:channel`: the channel a conversation runs in (per-channel settings). */
export function channelKey(p: Omit<ConversationParts, "thread">): string {
  return `${enc(p.platform)}:${enc(p.workspace)}:${enc(p.channel)}`;
}

/** `platform:workspace`: the prefix of every conversation, channel and user key of one workspace. */
export function workspaceKey(platform: Platform, workspace: string): string {
  return `${enc(platform)}:${enc(workspace)}`;
}

/**
 * Parsed keys, by key. A message's few keys are parsed again and again on its path (access, inbound,
 * observation, prompt, IO); the parts are frozen, so sharing them is safe. Oldest dropped first.
 */
export const PARSED_KEYS_MAX = 2048;
const parsed = new Map<string, Readonly<ConversationParts | UserParts>>();

function remember<T extends ConversationParts | UserParts>(key: string, parts: T): Readonly<T> {
  if (parsed.size >= PARSED_KEYS_MAX) parsed.delete(parsed.keys().next().value!);
  const frozen = Object.freeze(parts);
  parsed.set(key, frozen);
  return frozen;
}

export function parseConversationKey(key: ConversationKey): Readonly<ConversationParts> {
  const known = parsed.get(key);
  if (known && "thread" in known) return known;
  const parts = key.split(":");
  if (parts.length !== 4) throw new KeyError(`conversation key "${key}" must have 4 parts`);
  const [platform, workspace, channel, thread] = parts.map(dec) as [string, string, string, string];
  return remember(key, { platform: platformOf(platform, key), workspace, channel, thread });
}

export function userKey(p: UserParts): UserKey {
  return `${enc(p.platform)}:${enc(p.workspace)}:${enc(p.user)}`;
}

export function parseUserKey(key: UserKey): Readonly<UserParts> {
  const known = parsed.get(key);
  if (known && "user" in known) return known;
  const parts = key.split(":");
  if (parts.length !== 3) throw new KeyError(`user key "${key}" must have 3 parts`);
  const [platform, workspace, user] = parts.map(dec) as [string, string, string];
  return remember(key, { platform: platformOf(platform, key), workspace, user });
}

/**
 * A Redis Cluster hash tag. Redis hashes only what is between a key's first `{` and the next `}`, so
 * every store key of one conversation carries `{<conversation key>}`, every key of one user
 * `{<user key>}` and every key of one approval `{<approval id>}`: they share a hash slot, and a
 * script may take several keys of one of them on a cluster (keys of two different ones may not).
 * The tag is the key's only braces: ids never contain any (`enc`), nor may `NEO_KEY_PREFIX`.
 */
export function hashTag(id: string): string {
  if (id === "" || /[{}]/.test(id)) throw new KeyError(`"${id}" cannot be a hash tag (empty, or has braces)`);
  return `{${id}}`;
}

/** The id in a store key's hash tag (`conv:pending:{slack:T1:C1:1.2}` → `slack:T1:C1:1.2`). */
export function hashTagOf(key: string): string | undefined {
  return /\{([^{}]+)\}/.exec(key)?.[1];
}

/** The person speaking in a turn. Their cortex, and only theirs, is read and written. */
export interface Speaker {
  userKey: UserKey;
  displayName: string;
}

/**
 * Whose cortex a user key reads and writes. Slack user ids are per workspace, so a Slack cortex is
 * per workspace. Discord user ids are global: a person has one cortex across their DMs and guilds
 * (`discord:@me:<user>`), and what was learned in one guild stays there through each record's
 * provenance (`place.ts`: a guild's channels see only records of that guild, or widened ones).
 */
export function cortexOwner(user: UserKey): UserKey {
  const parts = parseUserKey(user);
  return parts.platform === "discord" ? userKey({ ...parts, workspace: "@me" }) : user;
}

/**
 * `rate:platform:part:…`: the store key of one platform rate budget (Store.rateWindow), shared by
 * every process, e.g. a Slack method in a workspace or a channel, or a Discord bot's global limit.
 * One key per budget, so each budget step is a single-key script.
 */
export function rateBudgetKey(platform: Platform, ...parts: string[]): string {
  let key = `rate:${enc(platform)}`;
  for (const p of parts) key += `:${enc(p)}`;
  return key;
}

/**
 * `rate:user:{<user key>}`: the store key of one user's turn bucket (Store.takeToken), shared by
 * every instance; hash-tagged with the user like the user's other keys.
 */
export function userTurnsKey(user: UserKey): string {
  return `rate:user:${hashTag(user)}`;
}

/**
 * `rate:user:{<user key>}:told`: set while the user has been told, by any instance, that their
 * turns are held back by their rate (so they hear it once, not once per instance).
 */
export function userThrottleToldKey(user: UserKey): string {
  return `${userTurnsKey(user)}:told`;
}
