/**
 * Who is an admin: the configured `NEO_ADMIN_USER_IDS` (full user keys `platform:workspace:user`,
 * `platform:user`, or bare platform user ids) plus whatever the platform says (Discord Manage
 * Server, Slack workspace admin/owner), passed in as `platformAdmin`.
 */
import { parseUserKey, type UserKey } from "../keys.js";

export type IsAdmin = (userKey: UserKey, platformAdmin?: boolean) => boolean;

export function createAdminCheck(adminIds: readonly string[]): IsAdmin {
  const entries = adminIds.map((e) => e.trim()).filter(Boolean);
  return (userKey, platformAdmin = false) => {
    if (platformAdmin) return true;
    let parts: ReturnType<typeof parseUserKey>;
    try {
      parts = parseUserKey(userKey);
    } catch {
      return false;
    }
    return entries.some((entry) => {
      const n = entry.split(":").length;
      if (n === 3) return entry === userKey;
      if (n === 2) return entry === `${parts.platform}:${parts.user}`;
      return entry === parts.user;
    });
  };
}
