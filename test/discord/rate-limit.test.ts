/**
 * A 429 from Discord is waited out by discord.js's REST queue (the only place that retries): the
 * rate-limited post and edit go through afterwards, nothing is lost, duplicated or reordered.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { RecordedCall } from "../fakes/discord/fake-discord.js";
import { type Rig, startRig } from "./support/harness.js";

const body = (c: RecordedCall) => c.body as Record<string, unknown>;

describe("Discord: rate limits", () => {
  let rig: Rig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it("waits out 429s on posts and edits; every chunk arrives once, in order", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    const dm = fake.dm(fake.carol);
    const paras = Array.from({ length: 5 }, (_, i) => `Part ${i}: ${"z".repeat(900)}`);
    ep.script(
      { reply: { toolCalls: [{ name: "gate__wait_for_gate", arguments: { name: "a" } }] } },
      { reply: { toolCalls: [{ name: "gate__wait_for_gate", arguments: { name: "b" } }] } },
      { reply: { text: paras.join("\n\n") } },
    );
    const postPath = new RegExp(`^/channels/${dm.id}/messages$`);
    // The status line's post, its edit, and the answer's second message are each refused once.
    fake.rateLimit("POST", postPath, 0.3, 1);
    fake.rateLimit("POST", postPath, 0.3, 1, (b) =>
      String((b as { content?: string }).content).startsWith("Part 2"),
    );
    fake.rateLimit("PATCH", new RegExp(`^/channels/${dm.id}/messages/\\d+$`), 0.3, 1);
    await fake.say(fake.carol, dm, "long one please");
    // The status line shows a second into the first tool; the second tool's status then edits it.
    await fake.waitForCall(
      (c) => c.method === "POST" && c.status < 300 && String(body(c).content).includes("gate__wait_for_gate"),
      "status line",
    );
    rig.openGate("a");
    rig.openGate("b");
    await fake.waitForCall(
      (c) => c.method === "POST" && String(body(c).content).startsWith("Part 4"),
      "last part",
    );
    await fake.waitForCall((c) => c.method === "DELETE" && c.status === 204, "status removal");

    const limited = fake.calls.filter((c) => c.status === 429);
    expect(limited.map((c) => c.method).sort()).toEqual(["PATCH", "POST", "POST"]);
    // Every refused call was sent again with the same body (same nonce) and succeeded.
    for (const l of limited) {
      const again = fake.calls.find(
        (c) => c.seq > l.seq && c.path === l.path && c.method === l.method && c.status < 300,
      );
      expect(again, `${l.method} ${l.path} retried`).toBeDefined();
      expect(again!.body).toEqual(l.body);
    }
    const answers = fake
      .channelMessages(dm.id)
      .filter((m) => m.author.id === fake.bot.id)
      .map((m) => m.content);
    expect(answers).toEqual(splitExpected(paras));
  });
});

/** The answer as the adapter splits it: paragraphs packed up to 2,000 characters. */
function splitExpected(paras: string[]): string[] {
  const out: string[] = [];
  let cur = "";
  for (const p of paras) {
    const next = cur ? `${cur}\n\n${p}` : p;
    if (next.length > 2000) {
      out.push(cur);
      cur = p;
    } else cur = next;
  }
  out.push(cur);
  return out;
}
