/**
 * No Slack payload takes Neo down or leaves a click hanging. Odd but signed payloads reach the real
 * Bolt app; each is answered, a failing one is counted by kind, and the next mention is answered.
 * A click on an `action_id` Neo no longer has is acked (200, not Bolt's unhandled-action 404) and
 * the clicker is told privately through `response_url`.
 *
 * Shapes: Events API envelope and `block_actions` payload as documented
 * (https://docs.slack.dev/apis/events-api/#callback-field, https://docs.slack.dev/reference/interaction-payloads/block_actions-payload)
 * and as @slack/bolt's own tests build them (src/App/*.spec.ts `createDummyBlockActionEventMiddlewareArgs`).
 */
import { afterEach, describe, expect, it } from "vitest";
import { envelope, type Harness, mention, startHarness, TEAM, userTs } from "./support/harness.js";

describe("Slack: odd payloads", () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it("an unknown action_id is acked at once and the clicker told the button is no longer active", async () => {
    h = await startHarness();
    const res = await h.slack.action({
      type: "block_actions",
      team: { id: TEAM, domain: "fake" },
      user: { id: "UANN", username: "ann", team_id: TEAM },
      api_app_id: "A1",
      token: "legacy",
      trigger_id: "1.2.3",
      container: { type: "message", message_ts: "1690000000.000001", channel_id: "C1", is_ephemeral: false },
      channel: { id: "C1", name: "general" },
      message: { type: "message", ts: "1690000000.000001", text: "old", user: "UNEO" },
      response_url: `${h.fake.baseUrl}/response/old-button`,
      actions: [
        {
          action_id: "legacy_refresh",
          block_id: "b1",
          value: "x",
          type: "button",
          text: { type: "plain_text", text: "Refresh" },
          action_ts: "1690000001.000001",
        },
      ],
    });
    expect(res.status).toBe(200);
    await h.fake.waitFor(() => h!.fake.responses.length === 1, "ephemeral through response_url");
    expect(h.fake.responses[0]).toMatchObject({
      id: "old-button",
      body: { response_type: "ephemeral", replace_original: false, text: "This button is no longer active." },
    });
  });

  it("odd events are answered 200 and the next mention still answered", async () => {
    h = await startHarness({ turns: [{ reply: { text: "Here." } }] });
    const odd: Array<Record<string, unknown>> = [
      // A message event with no channel_type, user or text (what a hidden system notice can look like).
      envelope({ type: "message", channel: "C1", ts: userTs(), event_ts: userTs() }),
      // Fields of the wrong type: ignored by the schema, never thrown on.
      envelope({ type: "app_mention", channel: { id: "C1" }, user: ["UANN"], ts: 5, text: null }),
      // An event Neo does not subscribe to (a workspace's old subscription list).
      envelope({
        type: "reaction_added",
        user: "UANN",
        reaction: "eyes",
        item: { type: "message", channel: "C1", ts: "1690000000.000001" },
        event_ts: userTs(),
      }),
    ];
    for (const p of odd) expect((await h.slack.event(p)).status).toBe(200);
    const ts = userTs();
    expect((await h.slack.event(envelope(mention("C1", "UANN", "still there?", { ts })))).status).toBe(200);
    await h.fake.waitFor(() => h!.fake.callsTo("chat.postMessage").length === 1, "answer");
    expect(h.ep.requests).toHaveLength(1);
  });
});
