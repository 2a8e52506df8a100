/**
 * The overhead bench's peer: the same mention → model → post bot as bench/system/bare-bolt.ts,
 * written on the Vercel Chat SDK (`chat`, `@chat-adapter/slack`, in-memory state as its docs suggest
 * for a single process). On a mention it asks the model the message's text (the openai SDK, streamed,
 * usage asked for — as Neo asks) and posts the answer in the mention's thread. Its own process, behind
 * node's http server (the SDK takes web `Request`s): `SLACK_BOT_TOKEN=… SLACK_SIGNING_SECRET=…
 * SLACK_API_URL=… PORT=… MODEL_URL=… node --import tsx bench/system/chat-sdk-bot.ts`.
 */
import { createServer, type IncomingMessage } from "node:http";
import { createSlackAdapter } from "@chat-adapter/slack";
import { createMemoryState } from "@chat-adapter/state-memory";
import { Chat, ConsoleLogger } from "chat";
import { ask, env, modelClient } from "./bare-model.js";

const model = modelClient();
const bot = new Chat({
  userName: "neo",
  adapters: {
    slack: createSlackAdapter({
      botToken: env("SLACK_BOT_TOKEN"),
      signingSecret: env("SLACK_SIGNING_SECRET"),
      apiUrl: env("SLACK_API_URL"),
      logger: new ConsoleLogger("warn"),
    }),
  },
  state: createMemoryState(),
  logger: "warn",
});

bot.onNewMention(async (thread, message) => {
  await thread.post(await ask(model, message.text));
});

/** The node request as the web `Request` the SDK's webhook handler takes. */
async function webRequest(req: IncomingMessage, port: number): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
  return new Request(`http://127.0.0.1:${port}${req.url ?? "/"}`, {
    method: req.method ?? "POST",
    headers,
    body: Buffer.concat(chunks),
  });
}

const port = Number(env("PORT"));
await bot.initialize();
createServer((req, res) => {
  void (async () => {
    // Background work (the handler) runs on after the ack, as `waitUntil` asks; a failure is logged.
    const answer = await bot.webhooks.slack(await webRequest(req, port), {
      waitUntil: (task) => {
        void Promise.resolve(task).catch((e: unknown) =>
          process.stderr.write(`chat-sdk-bot: ${String(e)}\n`),
        );
      },
    });
    res.writeHead(answer.status, Object.fromEntries(answer.headers));
    res.end(Buffer.from(await answer.arrayBuffer()));
  })().catch((e: unknown) => {
    res.writeHead(500).end(String(e));
  });
}).listen(port, "127.0.0.1", () => process.stdout.write("chat-sdk-bot: ready\n"));
// A stop that exits normally, so `--cpu-prof` (BENCH_PEER_NODE_ARGS) writes its profile.
process.once("SIGTERM", () => process.exit(0));
