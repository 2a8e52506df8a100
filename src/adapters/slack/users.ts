/** Who a Slack user is (display name, workspace admin/owner), from `users.info`, cached briefly. */
import type { SlackOutbound, UserInfo } from "./outbound.js";

export interface SlackUsers {
  get(userId: string): Promise<UserInfo>;
}

export function createSlackUsers(out: SlackOutbound, ttlMs = 10 * 60_000, max = 5000): SlackUsers {
  const cache = new Map<string, { info: UserInfo; at: number }>();
  const inflight = new Map<string, Promise<UserInfo>>();
  return {
    get: async (userId) => {
      const hit = cache.get(userId);
      if (hit && Date.now() - hit.at < ttlMs) return hit.info;
      const running = inflight.get(userId);
      if (running) return running;
      const p = out
        .usersInfo(userId)
        .then((info) => {
          if (cache.size >= max) cache.delete(cache.keys().next().value as string);
          cache.set(userId, { info, at: Date.now() });
          return info;
        })
        .finally(() => inflight.delete(userId));
      inflight.set(userId, p);
      return p;
    },
  };
}
