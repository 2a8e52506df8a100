/**
 * The overhead baseline: a bare Bolt app (HTTP receiver, default settings) that acks every
 * `app_mention` and posts one reply in its thread — no store, no model, no conversation layer.
 * Run as its own process by the system suite: `SLACK_BOT_TOKEN=… SLACK_SIGNING_SECRET=…
 * SLACK_API_URL=… PORT=… node --import tsx bench/system/bare-bolt.ts`.
 */
import { App } from "@slack/bolt";

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name}: required`);
  return v;
};

const app = new App({
  token: env("SLACK_BOT_TOKEN"),
  signingSecret: env("SLACK_SIGNING_SECRET"),
  clientOptions: { slackApiUrl: env("SLACK_API_URL") },
});

app.event("app_mention", async ({ event, client }) => {
  const token = /Q-([a-z0-9]+)/.exec(event.text)?.[1] ?? "none";
  await client.chat.postMessage({ channel: event.channel, thread_ts: event.ts, text: `Done. ACK-${token}` });
});

await app.start(Number(env("PORT")));
process.stdout.write("bare-bolt: ready\n");
