/**
 * The model call's CPU per message in this process: Neo's client (src/core/llm/client.ts) against the
 * bare app's call (bench/system/bare-model.ts), alternating, over the scripted endpoint the overhead
 * bench uses (test/support/scripted-openai.ts, in its own process so its CPU is not counted). Neo's
 * request has the bench's shape: a system block and a context block of a few KB, one user message,
 * the turn's signal, conversation tags and a text sink. `@discordjs/rest` is imported first as Neo's
 * process does (its `undici` becomes fetch's global dispatcher), so both calls go through the same
 * HTTP stack. Prints CPU µs per call (user + system), medians of batches: an A/B figure for the
 * client's own work, steadier than a profile of the bot.
 *
 *   npx tsx bench/llm-replay.ts [calls=3000] [warm-up=1000]
 */
import "@discordjs/rest";
import { spawn } from "node:child_process";
import OpenAI from "openai";
import { createLlmClient } from "../src/core/llm/client.js";
import { createUsageLedger } from "../src/core/llm/usage-ledger.js";

if (process.argv[2] === "serve") {
  const { startScriptedOpenAI } = await import("../test/support/scripted-openai.js");
  const ep = await startScriptedOpenAI([], { onViolation: "record" });
  ep.fallback(() => ({ text: "Done. ACK-prn1234" }));
  process.stdout.write(`${ep.url}\n`);
} else await main();

async function main(): Promise<void> {
  const N = Number(process.argv[2] ?? 3000);
  const WARM = Number(process.argv[3] ?? 1000);
  const server = spawn(process.execPath, ["--import", "tsx", import.meta.filename, "serve"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve) =>
    server.stdout.once("data", (b: Buffer) => resolve(b.toString().trim())),
  );
  const neo = createLlmClient(
    {
      OPENAI_API_KEY: "sk-bench",
      OPENAI_BASE_URL: url,
      NEO_MAIN_MODEL: "main-model",
      NEO_CHEAP_MODEL: undefined,
      NEO_LLM_MAX_RETRIES: 2,
      NEO_LLM_TIMEOUT_MS: 120_000,
    },
    createUsageLedger(),
  );
  const bare = new OpenAI({ baseURL: url, apiKey: "sk-bench" });
  const system = "You are Neo, a helpful assistant in a team's chat. ".repeat(80);
  const context = "Memory: the user likes short answers; the channel is about the release. ".repeat(25);
  const turn = new AbortController();
  let sunk = 0;
  const sink = {
    text: (d: string) => {
      sunk += d.length;
    },
    restart: () => undefined,
  };

  const neoCall = async (i: number) => {
    await neo.complete({
      role: "main",
      system,
      context,
      messages: [{ role: "user", content: `what is the status? Q-prn${i}` }],
      signal: turn.signal,
      onText: sink,
      tags: {
        purpose: "turn",
        conversation: `slack:TBENCH:C${i % 40}:1690000000.${i}`,
        user: "slack:TBENCH:U1",
      },
    });
  };
  const bareCall = async (i: number) => {
    const stream = await bare.chat.completions.create({
      model: "gpt-4o",
      messages: [
        { role: "system", content: system },
        { role: "user", content: `what is the status? Q-prn${i}` },
        { role: "system", content: context },
      ],
      stream: true,
      stream_options: { include_usage: true },
    });
    let answer = "";
    for await (const chunk of stream) answer += chunk.choices[0]?.delta?.content ?? "";
    sunk += answer.length;
  };

  const cpu = async (call: (i: number) => Promise<void>, i: number) => {
    const c = process.cpuUsage();
    await call(i);
    const d = process.cpuUsage(c);
    return d.user + d.system;
  };
  for (let i = 0; i < WARM; i++) {
    await neoCall(i);
    await bareCall(i);
  }
  const BATCH = 50;
  const batches = { neo: [] as number[], bare: [] as number[] };
  for (let b = 0; b < N / BATCH; b++) {
    let neoUs = 0;
    let bareUs = 0;
    for (let i = 0; i < BATCH; i++) {
      neoUs += await cpu(neoCall, i);
      bareUs += await cpu(bareCall, i);
    }
    batches.neo.push(neoUs / BATCH);
    batches.bare.push(bareUs / BATCH);
  }
  // Both clients read their answers: a run whose calls streamed nothing measured nothing.
  if (sunk === 0) throw new Error("the model calls streamed no text");
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const neoUs = median(batches.neo);
  const bareUs = median(batches.bare);
  // Paired: both calls of a batch ran under the same load, so their difference is the steadier figure.
  const extraUs = median(batches.neo.map((n, i) => n - batches.bare[i]!));
  process.stdout.write(
    `CPU per call (median of ${batches.neo.length} batches of ${BATCH}): neo ${neoUs.toFixed(0)} µs, ` +
      `bare ${bareUs.toFixed(0)} µs, neo - bare (median of the batches' differences) ${extraUs.toFixed(0)} µs\n`,
  );
  server.kill();
}
