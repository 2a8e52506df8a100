/**
 * A restarted shard's catch-up and its first live messages race: the live message in a channel is
 * handled (and the channel's mark moved to it) before the catch-up reads that mark, so what was sent
 * there while the process was down lies between the old mark and the live message. The catch-up must
 * still fetch it (seen in `npm run bench:fleet`: a mention sent while its shard was down, in a
 * channel that got another mention right after the restart, was never answered).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Client, Events, type Message } from "discord.js";
import { afterEach, describe, expect, it } from "vitest";
import { createBackfill } from "../../src/adapters/discord/backfill.js";
import { createDiscordClient } from "../../src/adapters/discord/client.js";
import { createFileStore } from "../../src/store/file-store.js";
import type { Store } from "../../src/store/types.js";
import { type FakeDiscord, startFakeDiscord } from "../fakes/discord/fake-discord.js";
import { message } from "../fakes/discord/payloads.js";

describe("Discord catch-up after a restart", () => {
  let fake: FakeDiscord | undefined;
  let client: Client | undefined;
  let store: Store | undefined;
  afterEach(async () => {
    await client?.destroy();
    await store?.close();
    await fake?.close();
  });

  it("fetches what was missed in a channel even when a live message there was handled first", async () => {
    fake = await startFakeDiscord();
    const f = fake;
    store = await createFileStore({ dataDir: mkdtempSync(join(tmpdir(), "neo-catch-up-")), prefix: "neo:" });
    const said = (content: string) => {
      const m = message({ channel: f.channel, author: f.alice, content });
      f.store(f.channel.id, m);
      return m;
    };
    const asMessage = (m: { id: string }) =>
      ({ id: m.id, channelId: f.channel.id, guildId: f.guildId }) as unknown as Message;

    // The process that died handled `before`; `missed` came while it was down.
    const before = said("before the crash");
    await createBackfill({} as Client, store).done(asMessage(before), true);
    const missed = said("while the shard was down");
    const live = said("right after the restart");

    client = createDiscordClient({ apiUrl: f.apiBase, store });
    const ready = new Promise<void>((resolve) => client!.once(Events.ClientReady, () => resolve()));
    await client.login(f.token);
    await ready;
    // The new process: the live message is handled before the catch-up reads the marks.
    const backfill = createBackfill(client, store);
    backfill.begin(asMessage(live));
    await backfill.done(asMessage(live), true);
    const caught: string[] = [];
    await backfill.run(async (m) => {
      caught.push(m.id);
    }, 0);

    expect(caught).toContain(missed.id);
    expect(caught).not.toContain(before.id);
  });
});
