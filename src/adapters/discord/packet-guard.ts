/**
 * discord.js 14 runs its packet handlers inside @discordjs/ws's `void onMessage()`: a throw there
 * (an INTERACTION_CREATE in an older documented shape makes `InteractionCreateAction` read
 * `data.entitlements.reduce`) becomes an unhandled rejection, and Node ends the process, Slack and
 * every running turn with it. `client.on('error')` and `shardError` never see it. The narrowest
 * place that catches it is the client's own packet dispatch (`WebSocketManager#handlePacket`, which
 * also replays packets queued before READY), so that one method is guarded, per client.
 */
import { type Client, Routes } from "discord.js";
import { log } from "../../core/log.js";
import type { PayloadErrorSink } from "../payload-errors.js";

interface GatewayPacket {
  t?: string | null;
  d?: unknown;
}

/** What the person whose interaction could not be read is told (ephemeral). */
export const UNREADABLE_INTERACTION =
  "Sorry, I could not read that interaction (an older Discord client?). Nothing was done; please try again.";

export function guardPackets(client: Client, failed: PayloadErrorSink): void {
  // `handlePacket` is private in discord.js's typings; its signature is stable across v14.
  const ws = client.ws as unknown as {
    handlePacket(packet?: GatewayPacket, shard?: unknown): boolean;
  };
  const handle = ws.handlePacket.bind(ws);
  ws.handlePacket = (packet, shard) => {
    try {
      return handle(packet, shard);
    } catch (err) {
      const kind = packet?.t ?? "unknown";
      failed(kind, err);
      if (kind === "INTERACTION_CREATE") acknowledgeUnreadable(client, packet?.d);
      return true;
    }
  };
}

/** The interaction still has its id and token: answer it at once so the click does not hang. */
function acknowledgeUnreadable(client: Client, d: unknown): void {
  const { id, token } = (d ?? {}) as { id?: unknown; token?: unknown };
  if (typeof id !== "string" || typeof token !== "string") return;
  client.rest
    .post(Routes.interactionCallback(id, token), {
      body: {
        type: 4,
        data: { content: UNREADABLE_INTERACTION, flags: 64, allowed_mentions: { parse: [] } },
      },
      auth: false,
    })
    // Expired or already answered: nothing more to tell; the failure itself is already logged.
    .catch((err: unknown) => log.debug({ err }, "discord: could not answer an unreadable interaction"));
}
