/**
 * Issue 19 item 3, memory and privacy, end to end on Discord (real discord.js client against the
 * fake, real loop, real memory over real Redis): a PNG and a CSV on a DM reach the model, but the
 * only way anything of them reaches the cortex is the write-back of the turn's text: the cheap
 * model's write-back request is text (the CSV's text, the image named), never the image; and after
 * the turn no key of the store (journal, cortex, recall, anything) holds the image's bytes, and the
 * image kept for the turn is deleted.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/store/types.js";
import { PNG } from "../files/support.js";
import { probeRedis, uniquePrefix } from "../support/redis.js";
import type { ScriptedRequest } from "../support/scripted-openai.js";
import { type Rig, startRig, until } from "./support/harness.js";

const redis = await probeRedis();
const CSV = "region,amount\nnorth,TOTAL-5531\n";
const PNG_B64 = PNG.toString("base64");
const isTurn = (r: ScriptedRequest) => r.purpose === "turn";
const isWriteback = (r: ScriptedRequest) => r.purpose === "writeback";

/** Every value in the store, as text (key-values and lists alike). */
async function everything(store: Store): Promise<Array<[string, string]>> {
  const out: Array<[string, string]> = [];
  for (const key of await store.keys("")) {
    // Rate windows (rate:*) are sorted sets of call times, readable only through rateWindow.
    if (key.startsWith("rate:")) continue;
    const value = await store.get<unknown>(key).catch(async () => store.range<unknown>(key, 0, -1));
    out.push([key, JSON.stringify(value) ?? ""]);
  }
  return out;
}

describe.skipIf(!redis.ok)("Discord: files and memory", () => {
  let rig: Rig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it("a file reaches the cortex only as the turn's text; no image bytes are kept after the turn", async () => {
    rig = await startRig({
      memory: true,
      files: { vision: true },
      redis: { url: redis.url, prefix: uniquePrefix("discord-files-memory") },
    });
    const { fake, ep, store } = rig;
    let writeback: ScriptedRequest | undefined;
    // The image as the model saw it: re-encoded without metadata (so not byte-equal to the upload).
    let seen = "";
    ep.script(
      {
        label: "the turn sees both files",
        match: isTurn,
        expect: (r) => {
          const body = JSON.stringify(r.messages);
          seen = /data:image\/png;base64,([A-Za-z0-9+/=]+)/.exec(body)?.[1] ?? "";
          expect(seen.length).toBeGreaterThan(100);
          expect(body).toContain("north,TOTAL-5531");
        },
        reply: { text: "The north total is TOTAL-5531." },
      },
      {
        label: "write-back",
        match: isWriteback,
        expect: (r) => {
          writeback = r;
        },
        reply: {
          text: JSON.stringify({
            conversations: [{ conversation: 1, user_facts: ["north total is TOTAL-5531"] }],
          }),
        },
      },
    );
    const dm = fake.dm(fake.alice);
    const before = rig.memory!.stats().processed;
    await fake.say(fake.alice, dm, "keep the totals", {
      extra: {
        attachments: [
          fake.attachment(dm.id, { name: "shot.png", type: "image/png", body: PNG }),
          fake.attachment(dm.id, { name: "q3.csv", type: "text/csv", body: Buffer.from(CSV) }),
        ],
      },
    });
    await until("write-back", () => rig!.memory!.stats().processed > before, 30_000);
    await until("the kept image deleted", async () => (await store.keys("files:")).length === 0);

    // The write-back read the turn's text: the CSV's text and the image's name, never the image.
    const sent = JSON.stringify(writeback!.messages);
    expect(sent).toContain("TOTAL-5531");
    expect(sent).toContain("shot.png");
    expect(sent).not.toContain(PNG_B64);
    expect(sent).not.toContain(seen);
    expect(sent).not.toContain("image_url");
    // Nothing in the store holds the image: not the journal, the cortex, nor the recalled turns.
    const all = await everything(store);
    expect(all.length).toBeGreaterThan(0);
    expect(
      all.filter(([, v]) => v.includes(PNG_B64) || v.includes(seen) || v.includes("data:image")),
    ).toEqual([]);
    // What was learned came through the write-back (the fact) and the recorded turn's text.
    expect(all.some(([, v]) => v.includes("north total is TOTAL-5531"))).toBe(true);
  });
});
