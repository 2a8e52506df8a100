/**
 * A Slack post's CPU in this process: a WebClient as Neo configures it (its fetch: the time limit of
 * src/adapters/slack/adapter/timed-fetch.ts over src/ops/http-fetch.ts, undici's request API)
 * against the same limit over node's fetch, alternating rounds of `chat.postMessage` to a local
 * server in its own process, each round followed by a pause as long as the limit (a timer left
 * running would fire in it). Prints CPU µs per post, medians of the rounds and of their paired
 * differences.
 *
 *   npx tsx bench/slack-post-replay.ts [rounds=40] [posts per round=200]
 */
import "@discordjs/rest"; // as in Neo's process: its undici is node's fetch's global dispatcher
import { fork } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { webApi } from "@slack/bolt";
import { fetchWithin } from "../src/adapters/slack/adapter/timed-fetch.js";
import { requestFetch } from "../src/ops/http-fetch.js";

if (process.argv[2] === "serve") {
  const answer = JSON.stringify({ ok: true, channel: "C1", ts: "1690000000.000100" });
  const s = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json; charset=utf-8" });
      res.end(answer);
    });
  });
  s.listen(0, "127.0.0.1", () => process.send!((s.address() as AddressInfo).port));
} else await main();

async function main(): Promise<void> {
  const ROUNDS = Number(process.argv[2] ?? 40);
  const POSTS = Number(process.argv[3] ?? 200);
  const LIMIT_MS = 300;
  const child = fork(import.meta.filename, ["serve"], { execArgv: ["--import", "tsx"] });
  const port = await new Promise<number>((r) => child.once("message", (p) => r(p as number)));
  const common = {
    slackApiUrl: `http://127.0.0.1:${port}/api/`,
    retryConfig: { retries: 2, factor: 2, minTimeout: 500, maxTimeout: 2000 },
    rejectRateLimitedCalls: true,
  };
  const clients = {
    nodeFetch: new webApi.WebClient("xoxb-bench", { ...common, fetch: fetchWithin(LIMIT_MS) }),
    neo: new webApi.WebClient("xoxb-bench", { ...common, fetch: fetchWithin(LIMIT_MS, requestFetch()) }),
  };
  const post = (c: webApi.WebClient, i: number) =>
    c.chat.postMessage({
      channel: "C1",
      thread_ts: "1690000000.000001",
      text: `Done. ACK-prn${i}`,
      token: "xoxb-bench",
    });
  const fired = () => new Promise((r) => setTimeout(r, LIMIT_MS * 1.5));
  for (let i = 0; i < 1500; i++) {
    await post(clients.nodeFetch, i);
    await post(clients.neo, i);
  }
  await fired();
  const us = { nodeFetch: [] as number[], neo: [] as number[] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const k of ["nodeFetch", "neo"] as const) {
      const c0 = process.cpuUsage();
      for (let i = 0; i < POSTS; i++) await post(clients[k], i);
      await fired();
      const d = process.cpuUsage(c0);
      us[k].push((d.user + d.system) / POSTS);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!.toFixed(0);
  process.stdout.write(
    `CPU per post (median of ${ROUNDS} rounds of ${POSTS}): node's fetch ${median(us.nodeFetch)} µs, ` +
      `Neo's ${median(us.neo)} µs, node's - Neo's (paired) ${median(us.nodeFetch.map((s, i) => s - us.neo[i]!))} µs\n`,
  );
  child.kill();
}
