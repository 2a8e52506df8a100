/**
 * Hostile files (issue 35): what reading one costs everyone else. The real Slack adapter, loop and
 * file reader pool (default: 2 workers) against the fake Slack and the scripted model. Each round,
 * Alice mentions Neo with five files of one kind and, once her first file is fetched, Bob mentions
 * Neo in another channel with none. Reported per kind: the main thread's event-loop stall while her
 * files are read (`monitorEventLoopDelay`, max and p99 over the round), Bob's time from his mention
 * to his answer, and that against the same round with Alice's mention carrying no file. The baseline
 * is measured in the same run.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import sharp from "sharp";
import { heavyPdf, pngHeader } from "../test/files/support.js";
import { envelope, mention, startHarness, until } from "../test/slack/support/harness.js";
import { type BenchSection, percentiles } from "./types.js";

const ROUNDS = 3;

interface Kind {
  label: string;
  name: string;
  mimetype: string;
  body: (i: number) => Buffer;
}

async function kinds(): Promise<Kind[]> {
  const bigPng = await sharp({ create: { width: 7000, height: 7000, channels: 3, background: "#3a6" } })
    .png()
    .toBuffer();
  const text = Buffer.from("Grüße 漢字テキスト ꀀꀁꀂꀃ 😀🚀 lorem ipsum dolor, 12345\n".repeat(240_000));
  return [
    { label: "no file (baseline)", name: "", mimetype: "", body: () => Buffer.alloc(0) },
    {
      label: "500-page PDF",
      name: "pages.pdf",
      mimetype: "application/pdf",
      body: () => heavyPdf.pages(500),
    },
    {
      label: "PDF nested 100,000 deep",
      name: "deep.pdf",
      mimetype: "application/pdf",
      body: () => heavyPdf.nested(100_000),
    },
    {
      label: "PDF of 300,000 operations",
      name: "ops.pdf",
      mimetype: "application/pdf",
      body: () => heavyPdf.bigStream(300_000),
    },
    {
      label: "PDF declaring 150,000 objects",
      name: "objs.pdf",
      mimetype: "application/pdf",
      body: () => heavyPdf.objects(150_000),
    },
    {
      label: "7000×7000 PNGs (2) and junk after a PNG header (3)",
      name: "img.png",
      mimetype: "image/png",
      body: (i) => (i < 2 ? bigPng : pngHeader(7000, 7000, 1 << 20)),
    },
    { label: "16 MB of text in several scripts", name: "huge.txt", mimetype: "text/plain", body: () => text },
  ];
}

interface Round {
  bobMs: number;
  stallMaxMs: number;
  stallP99Ms: number;
}

async function round(kind: Kind, n: number): Promise<Round> {
  const h = await startHarness({ files: { vision: true } });
  try {
    h.ep.fallback((r) => ({ text: r.purpose === "turn" ? "answered" : "{}" }));
    const files = kind.name
      ? Array.from({ length: 5 }, (_, i) =>
          h.fake.addFile({
            id: `F${n}K${i}`,
            name: `${i}-${kind.name}`,
            mimetype: kind.mimetype,
            body: kind.body(i),
          }),
        )
      : [];
    const loop = monitorEventLoopDelay({ resolution: 5 });
    loop.enable();
    await h.slack.event(
      envelope(mention("C1", "UANN", "alice reads these", files.length ? { files, upload: false } : {})),
    );
    if (files.length)
      await until("first file fetched", () => h.fake.fileRequests.some((f) => f.served), 60_000);
    const bobAt = Date.now();
    await h.slack.event(envelope(mention("C2", "UBOB", "bob asks")));
    await until("Bob answered", () => h.fake.messages("C2").some((m) => m.text === "answered"), 60_000);
    const bobMs = Date.now() - bobAt;
    // The stall over all of Alice's reading: until her turn reached the model.
    await until(
      "Alice's turn asked the model",
      () =>
        h.ep.requests.some((r) => r.purpose === "turn" && JSON.stringify(r.messages).includes("alice reads")),
      120_000,
    );
    loop.disable();
    return { bobMs, stallMaxMs: loop.max / 1e6, stallP99Ms: loop.percentile(99) / 1e6 };
  } finally {
    await h.close();
  }
}

export async function run(): Promise<BenchSection> {
  const all = await kinds();
  const rows: string[] = [];
  let baseline = 0;
  for (const kind of all) {
    const rounds: Round[] = [];
    for (let n = 0; n < ROUNDS; n++) rounds.push(await round(kind, n));
    const bob = percentiles(rounds.map((r) => r.bobMs)).median;
    if (!kind.name) baseline = bob;
    const stallMax = percentiles(rounds.map((r) => r.stallMaxMs)).median;
    const stallP99 = percentiles(rounds.map((r) => r.stallP99Ms)).median;
    const vs = kind.name ? `${bob - baseline >= 0 ? "+" : ""}${Math.round(bob - baseline)} ms` : "";
    rows.push(
      `| ${kind.label} | ${stallMax.toFixed(0)} ms | ${stallP99.toFixed(0)} ms | ${Math.round(bob)} ms | ${vs} |`,
    );
    process.stderr.write(
      `bench files: ${kind.label}: stall ${stallMax.toFixed(0)} ms, Bob ${Math.round(bob)} ms\n`,
    );
  }
  return {
    title: "Files: what a heavy file costs everyone else",
    markdown: [
      `Reproduce: \`npm run bench files\`. Five files of one kind on Alice's mention, Bob's mention once her first file is in (Slack harness, real reader pool with its default 2 workers and limits, vision on). Medians of ${ROUNDS} rounds. *Stall*: the main thread's event-loop delay (\`monitorEventLoopDelay\`, 5 ms resolution) from her mention until her turn reached the model. *Bob*: his mention to his answer. Goal (issue 35): Bob within 200 ms of his time without the file.`,
      "",
      "| Alice's files | stall max | stall p99 | Bob answered | vs no file |",
      "| --- | --- | --- | --- | --- |",
      ...rows,
    ].join("\n"),
  };
}
