/**
 * An MCP server's question on Slack, end to end: a real fixture server elicits during a tool call;
 * the form goes as an ephemeral message to the requester only; signed block_actions clicks go
 * through the real Bolt app; another user's submission is refused; the requester's answer reaches
 * the server, and a decline is reported to the model: in a real turn too (the model's next request).
 * Payload shape: https://docs.slack.dev/reference/interaction-payloads/block_actions-payload
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { conversationKey } from "../../src/core/keys.js";
import { parseManifest } from "../../src/core/tools/manifest.js";
import { createToolSurface, type McpToolSurface } from "../../src/core/tools/surface.js";
import { fixture, testContext } from "../tools/helpers.js";
import { envelope, ephemeralClick, type Harness, mention, startHarness, TEAM } from "./support/harness.js";

const THREAD = "1690000000.000888";
const CONV = conversationKey({ platform: "slack", workspace: TEAM, channel: "C9", thread: THREAD });
const ANN = { userKey: `slack:${TEAM}:UANN`, displayName: "Ann" };

let surface: McpToolSurface;
beforeAll(async () => {
  surface = await createToolSurface({
    manifest: parseManifest({ servers: { desk: fixture("elicits") } }),
    resultMaxChars: 2000,
    callTimeoutMs: 20_000,
  });
});
afterAll(async () => {
  await surface.close();
});

function press(
  h: Harness,
  user: string,
  actionId: string,
  formId: string,
  values: Record<string, unknown> = {},
) {
  return ephemeralClick(h, {
    user,
    channel: "C9",
    actionId,
    value: formId,
    responseId: "1.1",
    blockId: "neo_form",
    state: values,
  });
}

describe("Slack forms (MCP elicitation)", () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  async function ask(): Promise<{ result: Promise<string>; formId: string; blocks: string }> {
    h = await startHarness();
    const ctx = { ...testContext(), conversation: CONV, speaker: ANN, forms: h.adapter.io(CONV).forms };
    const result = surface.dispatch("desk__book_table", {}, ctx).then((r) => r.content);
    await h.fake.waitFor(() => h!.fake.callsTo("chat.postEphemeral").length === 1, "form");
    const call = h.fake.callsTo("chat.postEphemeral")[0]!;
    expect(call.args.user).toBe("UANN");
    expect(h.fake.callsTo("chat.postMessage")).toHaveLength(0);
    const blocks = typeof call.args.blocks === "string" ? call.args.blocks : JSON.stringify(call.args.blocks);
    const formId = /"value":"([0-9a-f-]{36})"/.exec(blocks)![1]!;
    return { result, formId, blocks };
  }

  it("only the requester is shown the form and can submit it; the answer reaches the server", async () => {
    const { result, formId, blocks } = await ask();
    expect(blocks).toContain('"initial_value":"2"');
    const entered = {
      "neo_form:name": { name: { type: "plain_text_input", value: "Ann" } },
      "neo_form:party": { party: { type: "plain_text_input", value: "4" } },
      "neo_form:terrace": { terrace: { type: "static_select", selected_option: { value: "yes" } } },
      "neo_form:time": { time: { type: "static_select", selected_option: { value: "20:30" } } },
    };
    expect((await press(h!, "UBOB", "neo_form_accept", formId, entered)).status).toBe(200);
    await h!.fake.waitFor(
      () => h!.fake.callsTo("chat.postEphemeral").some((c) => c.args.user === "UBOB"),
      "refusal to Bob",
    );
    const refusal = h!.fake.callsTo("chat.postEphemeral").find((c) => c.args.user === "UBOB")!;
    expect(refusal.args.text).toBe("Only the person who asked can answer this question.");
    expect((await press(h!, "UANN", "neo_form_accept", formId, entered)).status).toBe(200);
    expect(await result).toBe('accept: {"name":"Ann","party":4,"terrace":true,"time":"20:30"}');
  });

  it("in a turn: the form reaches only Ann in her thread, Bob's press is refused, her decline reaches the model", async () => {
    h = await startHarness({
      surface: () =>
        createToolSurface({
          manifest: parseManifest({ servers: { desk: fixture("elicits") } }),
          resultMaxChars: 2000,
          callTimeoutMs: 20_000,
        }),
    });
    const hh = h;
    hh.ep.script(
      { label: "book", reply: { toolCalls: [{ name: "desk__book_table", arguments: {} }] } },
      { label: "after the answer", reply: { text: "No table then." } },
    );
    await hh.slack.event(envelope(mention("C9", "UANN", "book a table", { thread_ts: THREAD })));
    await hh.fake.waitFor(() => hh.fake.callsTo("chat.postEphemeral").length === 1, "the form");
    const form = hh.fake.callsTo("chat.postEphemeral")[0]!;
    expect([form.args.user, form.args.channel, form.args.thread_ts]).toEqual(["UANN", "C9", THREAD]);
    expect(hh.fake.messages("C9").some((m) => JSON.stringify(m).includes("Who is the table for?"))).toBe(
      false,
    );
    const blocks = JSON.stringify(form.args.blocks);
    const formId = /"value":"([0-9a-f-]{36})"/.exec(blocks.replaceAll('\\"', '"'))![1]!;
    await press(hh, "UBOB", "neo_form_decline", formId);
    await hh.fake.waitFor(
      () => hh.fake.callsTo("chat.postEphemeral").some((c) => c.args.user === "UBOB"),
      "refusal to Bob",
    );
    expect(hh.ep.requests).toHaveLength(1); // Bob's press answered nothing
    await press(hh, "UANN", "neo_form_decline", formId);
    const second = await hh.ep.waitForRequest(2);
    expect(String(second.messages.at(-1)?.content)).toBe(
      'decline: {}\n[Ann declined the question "Who is the table for?" from server "desk"]',
    );
    await hh.fake.waitFor(() => hh.fake.messages("C9").some((m) => m.text === "No table then."), "answer");
  });

  it("a decline reaches the server and the model is told", async () => {
    const { result, formId } = await ask();
    await press(h!, "UANN", "neo_form_decline", formId);
    expect(await result).toBe(
      'decline: {}\n[Ann declined the question "Who is the table for?" from server "desk"]',
    );
  });
});
