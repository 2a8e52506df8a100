/**
 * What you see is what runs, on Discord: core_execute through the real embedded executor over the
 * fixture wallet (which logs every execution), the approval posted by the real adapter with the
 * real discord.js client against the fake Discord. The 141-transfer plan is refused (plan size),
 * a plan too long for an embed is refused (embed limits), both told to the model and in the
 * channel; a plan that fits is shown whole (the 900 USDC transfer on screen) and runs as shown.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { discordUser, threadConversation } from "../../src/adapters/discord/keys.js";
import { createCoreExecute } from "../../src/core/approvals/core-execute.js";
import { createEmbeddedExecutor } from "../../src/core/approvals/embedded-executor.js";
import { parseManifest } from "../../src/core/tools/manifest.js";
import { createToolSurface, type McpToolSurface } from "../../src/core/tools/surface.js";
import type { ToolCallContext } from "../../src/core/tools/types.js";
import { type Rig, startRig } from "../discord/support/harness.js";
import type { RecordedCall } from "../fakes/discord/fake-discord.js";
import { createLlmForTest } from "../support/llm-for-test.js";
import { fixture, tempDir } from "../tools/helpers.js";

const SMALL = "0x1111111111111111111111111111111111111111";
const BIG = "0x9999999999999999999999999999999999999999";
const transfer = (to: string, amount: string) => ({
  name: "wallet__transfer",
  arguments: { to, amount, asset: "USDC" },
});
const body = (c: RecordedCall) => c.body as Record<string, unknown>;

let rig: Rig | undefined;
let surface: McpToolSurface | undefined;
afterEach(async () => {
  await surface?.close();
  await rig?.close();
  surface = undefined;
  rig = undefined;
});

async function setup() {
  rig = await startRig();
  const r = rig;
  const logPath = join(tempDir("approvals-discord"), "wallet.log");
  surface = await createToolSurface({
    manifest: parseManifest({ servers: { wallet: fixture("wallet", { WALLET_LOG: logPath }) } }),
    resultMaxChars: 50_000,
    callTimeoutMs: 20_000,
  });
  const executor = createEmbeddedExecutor({
    llm: createLlmForTest(r.ep).llm,
    tools: surface,
    store: r.store,
  });
  const coreExecute = createCoreExecute({
    executor,
    broker: r.broker,
    caps: r.caps,
    access: r.access,
  });
  const conversation = threadConversation(r.fake.guildId, r.fake.channel.id, r.fake.channel.id);
  const io = r.adapter.io(conversation);
  const ctx: ToolCallContext = {
    conversation,
    speaker: { userKey: discordUser(r.fake.guildId, r.fake.alice.id), displayName: "Alice" },
    place: { kind: "public", workspace: r.fake.guildId },
    reporter: io.reporter,
    approvals: io.approvals,
    signal: new AbortController().signal,
    step: { callIds: ["call_1"] },
  };
  const walletLog = () =>
    existsSync(logPath)
      ? readFileSync(logPath, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l))
      : [];
  const posted = () => r.fake.calls.filter((c) => c.method === "POST" && c.path.endsWith("/messages"));
  return { r, ctx, walletLog, posted, run: (intent: string) => coreExecute(intent, ctx) };
}

describe("Discord: the whole plan is on screen", () => {
  it("141 transfers are refused (plan size), to the model and in the channel; nothing runs", async () => {
    const { r, walletLog, posted, run } = await setup();
    r.ep.script({
      reply: {
        toolCalls: [...Array.from({ length: 140 }, () => transfer(SMALL, "1")), transfer(BIG, "900")],
      },
    });
    const result = await run("pay them");
    expect(result.isError).toBe(true);
    expect(result.content).toContain("Refused before approval: the plan has 141 actions, more than the 50");
    expect(result.content).toContain("Nothing was executed.");
    await r.fake.waitForCall(
      (c) => JSON.stringify(c.body ?? "").includes("I did not ask for approval"),
      "notice",
    );
    expect(
      posted().some((c) => Array.isArray(body(c).embeds) && (body(c).embeds as unknown[]).length > 0),
    ).toBe(false);
    expect(walletLog()).toEqual([]);
  }, 60_000);

  it("a plan longer than an embed holds is refused with the limit it breaks", async () => {
    const { r, walletLog, run } = await setup();
    r.ep.script({ reply: { toolCalls: Array.from({ length: 45 }, (_, i) => transfer(`${BIG}${i}`, "1")) } });
    const result = await run("pay them");
    expect(result.content).toMatch(
      /cannot be shown in full on Discord: it needs \d+ characters, more than the 6000/,
    );
    expect(walletLog()).toEqual([]);
  }, 60_000);

  it("a plan that fits is shown whole, the 900 USDC transfer on screen, and runs exactly as shown", async () => {
    const { r, ctx, walletLog, run } = await setup();
    r.ep.script({
      reply: { toolCalls: [...Array.from({ length: 4 }, () => transfer(SMALL, "1")), transfer(BIG, "900")] },
    });
    const pending = run("pay them");
    const post = await r.fake.waitForCall(
      (c) => c.method === "POST" && Array.isArray(body(c).embeds) && (body(c).embeds as unknown[]).length > 0,
      "approval post",
    );
    const embed = JSON.stringify(body(post).embeds);
    for (let i = 1; i <= 4; i++)
      expect(embed).toContain(`**${i}.** \`wallet__transfer\` (1 \`USDC\` → \`${SMALL}\`)`);
    expect(embed).toContain(`**5.** \`wallet__transfer\` (900 \`USDC\` → \`${BIG}\`)`);
    expect(embed).toContain(`• \`${BIG}\`: 900 \`USDC\``);
    expect(embed).toContain(`• \`${SMALL}\`: 4 \`USDC\``);
    const [rec] = await r.broker.listPending();
    expect(embed).toContain(rec!.planHash);

    const messageId = (post.response as { id: string }).id;
    const msg = r.fake.channelMessages(r.fake.channel.id).find((m) => m.id === messageId)!;
    const customId = (body(post).components as Array<{ components: Array<{ custom_id: string }> }>)[0]!
      .components[0]!.custom_id;
    await r.fake.click({ user: r.fake.alice, message: msg, customId });
    const result = await pending;
    expect(result.isError).toBe(false);
    const ran = walletLog();
    expect(ran.map((t: { to: string; amount: string }) => [t.to, t.amount])).toEqual([
      [SMALL, "1"],
      [SMALL, "1"],
      [SMALL, "1"],
      [SMALL, "1"],
      [BIG, "900"],
    ]);
    expect(ctx.conversation).toBe(rec!.conversation);
  }, 60_000);
});
