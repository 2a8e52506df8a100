/**
 * The overhead baseline: a bare Bolt app (HTTP receiver, default settings) that, on every
 * `app_mention`, asks the model the mention's text the way Neo does (bench/system/bare-model.ts: the
 * openai SDK, streamed, usage asked for) and posts the answer in its thread — no store, no
 * conversation layer: the same model round trip Neo makes, and nothing else. Run as its own process
 * by the system suite: `SLACK_BOT_TOKEN=… SLACK_SIGNING_SECRET=… SLACK_API_URL=… PORT=… MODEL_URL=…
 * node --import tsx bench/system/bare-bolt.ts`.
 */
import { App } from "@slack/bolt";
import { ask, env, modelClient } from "./bare-model.js";

const app = new App({
  token: env("SLACK_BOT_TOKEN"),
  signingSecret: env("SLACK_SIGNING_SECRET"),
  clientOptions: { slackApiUrl: env("SLACK_API_URL") },
});
const model = modelClient();

app.event("app_mention", async ({ event, client }) => {
  const text = await ask(model, event.text);
  await client.chat.postMessage({ channel: event.channel, thread_ts: event.ts, text });
});

await app.start(Number(env("PORT")));
process.stdout.write("bare-bolt: ready\n");
// A stop that exits normally, so `--cpu-prof` (BENCH_PEER_NODE_ARGS) writes its profile.
process.once("SIGTERM", () => process.exit(0));
