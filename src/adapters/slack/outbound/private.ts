/**
 * Calls that reach one person privately: their DM with Neo (`conversations.open`, for the export's
 * file) and their App Home tab (`views.publish`). Both are Tier 4 (~100/min,
 * https://docs.slack.dev/reference/methods/conversations.open, .../views.publish), as `users.info`.
 */
import type { OutboundContext } from "./context.js";

export interface SlackPrivateCalls {
  /** The id of `user`'s DM with Neo (opened if it was not); throws when Slack refuses. */
  openDm(user: string): Promise<string>;
  /** Publish `view` (a `home` view) as `user`'s App Home; throws when Slack refuses. */
  publishHome(user: string, view: Record<string, unknown>): Promise<void>;
}

export function createPrivateCalls({ client, rules, token, gated }: OutboundContext): SlackPrivateCalls {
  return {
    async openDm(user) {
      const res = await gated("conversations.open", rules.usersInfo, async () =>
        client.conversations.open({ users: user, token: await token() }),
      );
      const id = res?.channel?.id;
      if (!id) throw new Error("Slack opened no DM");
      return id;
    },
    async publishHome(user, view) {
      await gated("views.publish", rules.usersInfo, async () =>
        client.views.publish({
          user_id: user,
          view: view as unknown as Parameters<typeof client.views.publish>[0]["view"],
          token: await token(),
        }),
      );
    },
  };
}
