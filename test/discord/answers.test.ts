/**
 * DMs, long answers and pings: a DM is one conversation; a 4,500-character answer with a code block
 * is split under 2,000 characters with the fence closed and reopened; `@everyone` in model output
 * never pings (allowed_mentions on every message create and edit the bot makes).
 */
import { afterEach, describe, expect, it } from "vitest";
import { dmConversation } from "../../src/adapters/discord/keys.js";
import { splitMessage } from "../../src/adapters/discord/split.js";
import { type RecordedCall, wrote } from "../fakes/discord/fake-discord.js";
import { botMessages, type Rig, startRig, untilShown } from "./support/harness.js";

const body = (c: RecordedCall) => c.body as Record<string, unknown>;
const creates = (rig: Rig, ch: string) =>
  rig.fake.calls.filter((c) => c.method === "POST" && c.path === `/channels/${ch}/messages`);

function assertNoPings(rig: Rig): number {
  const writes = rig.fake.calls.filter(
    (c) =>
      (c.method === "POST" || c.method === "PATCH") &&
      (/\/messages(\/\d+)?$/.test(c.path) || /^\/webhooks\//.test(c.path) || c.path.endsWith("/callback")),
  );
  for (const c of writes) {
    const b = body(c);
    const payload = (c.path.endsWith("/callback") ? b.data : b) as Record<string, unknown> | undefined;
    if (c.path.endsWith("/callback") && !payload?.content) continue;
    expect(payload?.allowed_mentions, `${c.method} ${c.path}`).toEqual({ parse: [], replied_user: false });
  }
  return writes.length;
}

describe("Discord: answers", () => {
  let rig: Rig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it("answers a DM in the DM, as one conversation across messages", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    const dm = fake.dm(fake.alice);
    ep.script({ reply: { text: "Hi Alice." } }, { reply: { text: "You said hello before." } });
    await fake.say(fake.alice, dm, "hello");
    await fake.waitForCall(wrote("Hi Alice.", dm.id), "DM answer");
    await fake.say(fake.alice, dm, "what did I say?");
    await fake.waitForCall(wrote("You said hello before.", dm.id), "second DM answer");
    // One transcript: the second request carries the first exchange; DMs are not name-prefixed.
    const users = ep.requests[1]!.messages.filter((m) => m.role === "user").map((m) => m.content);
    expect(users).toEqual(["hello", "what did I say?"]);
    expect(fake.calls.some((c) => c.path.endsWith("/threads"))).toBe(false);
  });

  it("splits a 4,500-character answer with a code block at 2,000 on paragraph/fence boundaries", async () => {
    // Splitting is the subject: code blocks stay in the answer (not sent as files).
    rig = await startRig({ env: { NEO_ANSWER_FILE_CODE_LINES: "0" } });
    const { fake, ep } = rig;
    const intro = `Here is the script.\n\n${"Some explanation. ".repeat(40).trim()}`;
    const code = Array.from(
      { length: 120 },
      (_, i) => `echo "step ${String(i).padStart(3, "0")} of the deployment"`,
    );
    const answer = `${intro}\n\n\`\`\`bash\n${code.join("\n")}\n\`\`\`\n\nThat is all.`;
    expect(answer.length).toBeGreaterThan(4500);
    ep.script({ reply: { text: answer } });
    const dm = fake.dm(fake.bob);
    await fake.say(fake.bob, dm, "write me the script");
    // Streamed as it was written; what stands at the end is exactly the split answer.
    await untilShown(fake, dm.id, splitMessage(answer));
    const chunks = botMessages(fake, dm.id).map((m) => m.content);
    expect(chunks.length).toBe(3);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(2000);
      expect(c.split("\n").filter((l) => l.startsWith("```")).length % 2).toBe(0);
    }
    expect(chunks[0]!.startsWith("Here is the script.")).toBe(true);
    expect(chunks[1]!.startsWith("```bash\n")).toBe(true);
    expect(chunks[2]!.startsWith("```bash\n")).toBe(true);
    // Every code line arrives once, in order.
    const lines = chunks
      .join("\n")
      .split("\n")
      .filter((l) => l.startsWith("echo "));
    expect(lines).toEqual(code);
    // Each chunk was posted with its own nonce, enforced.
    const nonces = creates(rig, dm.id).map((c) => body(c).nonce);
    expect(new Set(nonces).size).toBe(3);
    for (const c of creates(rig, dm.id)) expect(body(c).enforce_nonce).toBe(true);
  });

  it("an answer said again under the same key (a resumed turn after a crash) is not posted twice", async () => {
    rig = await startRig();
    const { fake } = rig;
    const dm = fake.dm(fake.alice);
    const reporter = rig.adapter.io(dmConversation(dm.id)).reporter;
    const long = `${"Sent 5 USDC to 0xabc. ".repeat(120)}tx 0x01`; // more than one message
    await reporter.say(long, { id: "turn-1" });
    const first = fake.channelMessages(dm.id).map((m) => m.id);
    expect(first.length).toBeGreaterThan(1);
    // The same answer, same key, from a new process's reporter: Discord returns the same messages.
    await rig.restartAdapter();
    await rig.adapter.io(dmConversation(dm.id)).reporter.say(long, { id: "turn-1", resumed: true });
    expect(fake.channelMessages(dm.id).map((m) => m.id)).toEqual(first);
    // Another turn's answer with the same words is a new message; so is one said without a key.
    await rig.adapter.io(dmConversation(dm.id)).reporter.say("Done.", { id: "turn-2" });
    await rig.adapter.io(dmConversation(dm.id)).reporter.say("Done.", { id: "turn-3" });
    await rig.adapter.io(dmConversation(dm.id)).reporter.say("Done.");
    expect(fake.channelMessages(dm.id).filter((m) => m.content === "Done.")).toHaveLength(3);
  });

  it("an @everyone / @here / role / user ping in model output does not ping anyone", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    const text = `@everyone @here <@&${fake.adminRoleId}> <@${fake.bob.id}> the build is green`;
    ep.script(
      { reply: { toolCalls: [{ name: "gate__wait_for_gate", arguments: { name: "@everyone" } }] } },
      { reply: { text } },
    );
    await fake.say(fake.alice, fake.channel, "ping everyone about the build", { mentionBot: true });
    // The tool runs until its status line (a second in) is up: it, too, must ping nobody.
    await fake.waitForCall(
      (c) =>
        c.method === "POST" &&
        String((c.body as { content?: unknown }).content).includes("gate__wait_for_gate"),
      "status line",
    );
    rig.openGate("@everyone");
    await fake.waitForCall(wrote(text), "the answer");
    await fake.waitForCall((c) => c.method === "DELETE", "status removal");
    expect(assertNoPings(rig)).toBeGreaterThanOrEqual(2);
  });
});

describe("Discord: back-to-back answers", () => {
  let rig: Rig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it("a new answer waits for room in the channel's window, not for the previous answer's edit pacing", async () => {
    // An edit cadence no test could wait out: an answer that waited for the previous one's would
    // never come. Four answers fit the channel's window (5 writes per 5 s, one kept for the status line).
    rig = await startRig({ draftIntervalMs: 600_000 });
    const { fake, ep } = rig;
    const dm = fake.dm(fake.alice);
    ep.fallback((r) =>
      r.purpose === "turn" ? { text: `answer ${r.index}` } : { text: '{"conversations":[]}' },
    );
    for (let i = 1; i <= 4; i++) {
      const before = fake.calls.length;
      await fake.say(fake.alice, dm, `question ${i}`);
      await fake.waitForCall(
        (c) => fake.calls.indexOf(c) >= before && wrote((t) => t.startsWith("answer "), dm.id)(c),
        `answer ${i}`,
      );
    }
    expect(botMessages(fake, dm.id).filter((m) => m.content.startsWith("answer "))).toHaveLength(4);
    expect(fake.busiestWindow(dm.id)).toBeLessThanOrEqual(5);
    expect(fake.calls.filter((c) => c.status === 429)).toEqual([]);
  });
});
