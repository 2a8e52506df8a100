/**
 * Who a Slack workspace's users are (display name, workspace admin/owner, bot), kept in the store
 * (directory.ts: shared by every instance, kept across restarts), learned from `users.info` and
 * from `user_change` events. A name for what the model reads never waits for room: when none is
 * kept and `users.info` has no room this instant, the event's own (`user_profile`, a mention's
 * label) or the id stands meanwhile. The admin flag, which decides
 * rights, is asked of Slack (waiting for room) when what is kept is older than ten minutes.
 */
import { userKey } from "../../core/keys.js";
import type { Store } from "../../store/types.js";
import { createDirectory } from "./directory.js";
import type { UserInfo } from "./outbound/lookups.js";
import type { RateRule } from "./rate-gate/key-state.js";

export interface SlackUsers {
  /** Who `userId` is, for a decision on rights: asked of Slack, waiting, unless learned in 10 minutes. */
  get(userId: string): Promise<UserInfo>;
  /**
   * The display name: kept, else asked of Slack if `users.info` has room this instant, else
   * undefined (asked in the background, for next time). Never waits for room.
   */
  name(userId: string): Promise<string | undefined>;
  /** What a `user_change` event said at `at` (ms). */
  learn(user: UserInfo, at: number): Promise<void>;
  stop(): void;
}

/** How recent a kept admin flag must be to decide rights without asking Slack. */
export const ADMIN_FRESH_MS = 10 * 60_000;
/** A name older than this is used and asked again in the background. */
const USER_STALE_MS = 24 * 60 * 60_000;
const USER_TTL_MS = 7 * 24 * 60 * 60_000;

export function createSlackUsers(o: {
  store: Store;
  team: string;
  rule: RateRule;
  usersInfo(user: string, opts: { optional: boolean }): Promise<UserInfo | undefined>;
}): SlackUsers {
  const dir = createDirectory<UserInfo>({
    store: o.store,
    key: (user) => `directory:user:${userKey({ platform: "slack", workspace: o.team, user })}`,
    fetch: (user, optional) => o.usersInfo(user, { optional }),
    complete: (v) => v.displayName !== undefined && v.isAdmin !== undefined,
    retryMs: Math.ceil(o.rule.windowMs / o.rule.limit),
    staleMs: USER_STALE_MS,
    ttlMs: USER_TTL_MS,
    method: "users.info",
  });
  return {
    get: (userId) => dir.get(userId, ADMIN_FRESH_MS),
    name: async (userId) => (await dir.now(userId, (v) => v.displayName !== undefined, true))?.displayName,
    learn: (user, at) => dir.learn(user.id, user, at),
    stop: dir.stop,
  };
}
