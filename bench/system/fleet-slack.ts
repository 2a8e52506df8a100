/**
 * The fleet bench's Slack side (fleet.ts): one fake Slack workspace that answers 429 beyond Slack's
 * tiers (SLACK_TIERS) and records every call of the whole fleet; instances with their own
 * NEO_HTTP_PORT / NEO_METRICS_PORT / NEO_INSTANCE_ID. Deliveries go through a round-robin "load
 * balancer" that knows nothing of health: an attempt that reaches a dead instance fails and is
 * retried the way Slack retries (drivers.ts), each retry to the next instance.
 */
import { startFakeSlack } from "../../test/fakes/slack/fake-slack.js";
import { createSlackDelivery, envelope } from "./drivers.js";
import type { FleetPlatformFactory } from "./fleet.js";
import { answeredTokens } from "./ledger.js";
import { question } from "./model.js";
import { observeSlack } from "./observe.js";
import { freePort } from "./procs.js";
import { SIGNING_SECRET, SLACK_TIERS } from "./stack.js";

export const createSlackFleet: FleetPlatformFactory = async (spec, ledger) => {
  const users = Array.from({ length: spec.users }, (_, i) => ({
    id: `UFLEET${i}`,
    name: `fleet${i}`,
    display_name: `Fleet ${i}`,
  }));
  const channels = Array.from({ length: spec.channels }, (_, i) => ({
    id: `CFL${spec.prefix.toUpperCase()}${String(i).padStart(4, "0")}`,
    name: `fleet-${spec.prefix}-${i}`,
  }));
  const slack = await startFakeSlack({
    teamId: "TBENCH",
    users: [...users, { id: "UNEO", name: "neo", display_name: "Neo", is_bot: true }],
    tiers: SLACK_TIERS,
    channels,
  });
  observeSlack(slack, ledger);
  const ports: Array<{ http: number; metrics: number }> = [];
  for (let i = 0; i < spec.instances; i++) ports.push({ http: await freePort(), metrics: await freePort() });
  let rr = 0;
  const delivery = createSlackDelivery(
    () => `http://127.0.0.1:${ports[rr++ % ports.length]!.http}/slack/events`,
    SIGNING_SECRET,
  );

  return {
    env: (i) => ({
      SLACK_BOT_TOKEN: "xoxb-bench-token",
      SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SLACK_API_URL: slack.apiUrl,
      NEO_HTTP_PORT: String(ports[i]!.http),
      NEO_METRICS_PORT: String(ports[i]!.metrics),
      NEO_INSTANCE_ID: `fleet-${spec.prefix}-${i + 1}`,
    }),
    healthPort: (i) => ports[i]!.http,
    // Slack reaches an instance over HTTP: serving /healthz is being connected.
    connected: () => () => true,
    mention(token, channel, user) {
      const ts = slack.nextTs();
      const text = `<@UNEO> ${question(token)}`;
      const id = channels[channel]!.id;
      const event = { type: "app_mention", channel: id, user: users[user]!.id, text, ts, event_ts: ts };
      ledger.send(token, "slack", `slack:${id}`);
      return delivery.deliver(envelope(slack.teamId, event));
    },
    judge(prefix) {
      const overLimit: Record<string, number> = {};
      const windows = new Set<string>();
      for (const c of slack.violations()) {
        overLimit[c.method] = (overLimit[c.method] ?? 0) + 1;
        const tier = SLACK_TIERS[c.method];
        const scope = tier?.scope === "channel" ? String(c.args.channel) : "workspace";
        windows.add(`${c.method} ${scope} ${Math.floor(c.at / (tier?.windowMs ?? 1))}`);
      }
      const calls: Record<string, number> = {};
      for (const c of slack.calls)
        calls[`${c.method} ${c.status}`] = (calls[`${c.method} ${c.status}`] ?? 0) + 1;
      const together = new Set<string>();
      for (const c of slack.calls) {
        if (c.status !== 200) continue;
        const found = answeredTokens(String(c.args.text ?? c.args.markdown_text ?? ""));
        if (new Set(found).size > 1) for (const t of found) if (t.startsWith(`${prefix}m`)) together.add(t);
      }
      return { overLimit, windowsOver: windows.size, answeredTogether: together.size, calls };
    },
    close: () => slack.close(),
  };
};
