/**
 * A server's `elicitation/create` during a tool call, against a real fixture server over stdio:
 * the question reaches the turn's `FormChannel` with the requester named, the answer (defaults
 * filled for fields left empty) reaches the server, and a decline, a timeout or a place without
 * forms is reported to the model in the tool's result.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FormAnswer, FormChannel, FormField, FormQuestion } from "../../src/core/tools/elicitation.js";
import { readAnswers } from "../../src/core/tools/elicitation.js";
import { parseManifest } from "../../src/core/tools/manifest.js";
import { createToolSurface, type McpToolSurface } from "../../src/core/tools/surface.js";
import { fixture, testContext } from "./helpers.js";

let surface: McpToolSurface;

beforeAll(async () => {
  surface = await createToolSurface({
    manifest: parseManifest({ servers: { desk: fixture("elicits") } }),
    resultMaxChars: 2000,
    callTimeoutMs: 2_000,
  });
});

afterAll(async () => {
  await surface.close();
});

/** A FormChannel that records what it is asked and answers with `answer(question)`. */
function forms(answer: (q: FormQuestion, signal: AbortSignal) => Promise<FormAnswer>) {
  const asked: Array<{ q: FormQuestion; who: string }> = [];
  const channel: FormChannel = {
    tell: async () => {},
    ask: (q, who, signal) => {
      asked.push({ q, who: who.userKey });
      return answer(q, signal);
    },
  };
  return { asked, channel };
}

describe("elicitation", () => {
  it("asks the requester the server's form and sends their answer, defaults filled", async () => {
    const f = forms(async (q) => {
      if (q.mode !== "form") throw new Error("expected a form");
      // The person typed only a name: the rest are left at their prefilled defaults.
      const read = readAnswers(q.fields, { name: "Ada" });
      if ("error" in read) throw new Error(read.error);
      return { action: "accept", content: read.content };
    });
    const ctx = { ...testContext(), forms: f.channel };
    const result = await surface.dispatch("desk__book_table", {}, ctx);
    expect(f.asked.map((a) => a.who)).toEqual(["console:local:tester"]);
    const q = f.asked[0]!.q;
    expect(q.mode === "form" && q.fields.map((x) => [x.name, x.type, x.required, x.default])).toEqual([
      ["name", "string", true, undefined],
      ["party", "integer", false, 2],
      ["terrace", "boolean", false, false],
      ["time", "enum", false, "19:00"],
    ]);
    expect(result.content).toBe('accept: {"name":"Ada","party":2,"terrace":false,"time":"19:00"}');
  });

  it("an accepted form with fields omitted gets the schema's defaults (SEP-1034)", async () => {
    const f = forms(async () => ({ action: "accept", content: { name: "Bo" } }));
    const result = await surface.dispatch("desk__book_table", {}, { ...testContext(), forms: f.channel });
    expect(result.content).toBe('accept: {"name":"Bo","party":2,"terrace":false,"time":"19:00"}');
  });

  it("a decline reaches the server and the model is told", async () => {
    const f = forms(async () => ({ action: "decline" }));
    const result = await surface.dispatch("desk__book_table", {}, { ...testContext(), forms: f.channel });
    expect(result.content).toBe(
      'decline: {}\n[Tester declined the question "Who is the table for?" from server "desk"]',
    );
  });

  it("a question nobody answers is cancelled at half the call's timeout, and the form is withdrawn", async () => {
    let withdrawn = false;
    const f = forms(
      (_q, signal) =>
        new Promise<FormAnswer>(() => {
          signal.addEventListener("abort", () => {
            withdrawn = true;
          });
        }),
    );
    const result = await surface.dispatch("desk__sign_in", {}, { ...testContext(), forms: f.channel });
    expect(f.asked[0]!.q).toMatchObject({ mode: "url", url: "https://tracker.example/login?x=1" });
    expect(withdrawn).toBe(true);
    expect(result.content).toContain("cancel: {}");
    expect(result.content).toContain('[Tester did not answer (cancelled or timed out) the question "Sign in');
  });

  it("where no form can be shown, the server gets cancel and the model is told why", async () => {
    const result = await surface.dispatch("desk__book_table", {}, testContext());
    expect(result.content).toBe(
      'cancel: {}\n[Tester did not answer (cancelled or timed out) the question "Who is the table for?" from server "desk": this place cannot show forms]',
    );
  });

  it("reads typed answers: wrong types and missing required fields are errors naming the field", () => {
    const fields: FormField[] = [
      { name: "n", label: "N", type: "integer", required: true },
      { name: "b", label: "B", type: "boolean", required: false },
      { name: "e", label: "E", type: "enum", required: false, options: [{ value: "x", label: "Ex" }] },
    ];
    expect(readAnswers(fields, { n: "" })).toEqual({ error: '"N" is required' });
    expect(readAnswers(fields, { n: "1.5" })).toEqual({ error: '"N" must be a whole number' });
    expect(readAnswers(fields, { n: "3", b: "maybe" })).toEqual({ error: '"B" must be yes or no' });
    expect(readAnswers(fields, { n: "3", e: "y" })).toEqual({ error: '"E" must be one of x' });
    expect(readAnswers(fields, { n: "3", b: "yes", e: "Ex" })).toEqual({
      content: { n: 3, b: true, e: "x" },
    });
  });
});
