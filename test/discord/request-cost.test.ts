/**
 * What a turn costs in Discord requests, all of which share discord.js's global 50 per second: an
 * answer ready within the typing delay is its own sign of work (no typing call) and an answer
 * finished within the draft's first-write delay is posted once, whole (no partial with Stop, then
 * an edit). A turn that takes longer still types while it works. Real discord.js against the fake.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { RecordedCall } from "../fakes/discord/fake-discord.js";
import { type Rig, startRig, untilShown } from "./support/harness.js";

const inChannel = (ch: string) => (c: RecordedCall) => c.path.startsWith(`/channels/${ch}/`);
const isTyping = (ch: string) => (c: RecordedCall) =>
  c.method === "POST" && c.path === `/channels/${ch}/typing`;

describe("Discord: requests per turn", () => {
  let rig: Rig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it("an answer streamed and finished at once is one message create: no typing call, no edit", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    const dm = fake.dm(fake.alice);
    ep.script({ reply: { text: "The build is green on every branch.", stream: { deltas: 4 } } });
    await fake.say(fake.alice, dm, "is the build green?");
    await untilShown(fake, dm.id, ["The build is green on every branch."]);
    expect(fake.calls.filter(inChannel(dm.id)).map((c) => `${c.method} ${c.path}`)).toEqual([
      `POST /channels/${dm.id}/messages`,
    ]);
  });

  it("a turn still working after the typing delay types, then answers", async () => {
    rig = await startRig();
    const { fake, ep } = rig;
    const dm = fake.dm(fake.bob);
    ep.script({
      reply: {
        text: "Three regions are rolled out.",
        // The model says nothing until the user sees Neo typing.
        stream: {
          beforeDelta: (i) =>
            i === 0 ? fake.waitForCall(isTyping(dm.id), "typing").then(() => {}) : Promise.resolve(),
        },
      },
    });
    await fake.say(fake.bob, dm, "how far is the rollout?");
    await untilShown(fake, dm.id, ["Three regions are rolled out."]);
    const calls = fake.calls.filter(inChannel(dm.id));
    expect(calls[0]!.path).toBe(`/channels/${dm.id}/typing`);
    expect(calls.filter((c) => c.path.endsWith("/messages"))).toHaveLength(1);
  });
});
