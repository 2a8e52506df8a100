/**
 * The overhead baselines: a bare Bolt app (HTTP receiver, default settings) that acks every
 * `app_mention` and posts one reply in its thread — no store, no conversation layer. Without
 * `MODEL_URL` it posts at once (no model); with it, it first asks the model the mention's text the
 * way Neo does (the openai SDK, streamed, usage asked for) and posts the answer: the same model round
 * trip Neo makes, and nothing else. Run as its own process by the system suite:
 * `SLACK_BOT_TOKEN=… SLACK_SIGNING_SECRET=… SLACK_API_URL=… PORT=… [MODEL_URL=…] node --import tsx bench/system/bare-bolt.ts`.
 */
import { App } from "@slack/bolt";
import OpenAI from "openai";

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

const modelUrl = process.env.MODEL_URL;
const model = modelUrl ? new OpenAI({ baseURL: modelUrl, apiKey: "sk-bench" }) : null;

/** The model's streamed answer to `text`. */
async function ask(client: OpenAI, text: string): Promise<string> {
  const stream = await client.chat.completions.create({
    model: "gpt-4o",
    messages: [{ role: "user", content: text }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let answer = "";
  for await (const chunk of stream) answer += chunk.choices[0]?.delta?.content ?? "";
  return answer;
}

app.event("app_mention", async ({ event, client }) => {
  const token = /Q-([a-z0-9]+)/.exec(event.text)?.[1] ?? "none";
  const text = model ? await ask(model, event.text) : `Done. ACK-${token}`;
  await client.chat.postMessage({ channel: event.channel, thread_ts: event.ts, text });
});

await app.start(Number(env("PORT")));
process.stdout.write("bare-bolt: ready\n");
