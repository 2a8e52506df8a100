/**
 * One Slack mention whose turn calls a tool, traced: the real tracing setup (OTLP/HTTP JSON) to a
 * local receiver, the whole Slack stack (harness) answering. Shared by the trace tests, one process
 * each, since a process registers its tracer provider once.
 */

import { startTracing, type Tracing } from "../../../src/ops/tracing/setup.js";
import { envelope, type Harness, mention, startHarness } from "../../slack/support/harness.js";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../../support/otlp-receiver.js";

export const QUESTION = "what is the status of order 4411";
export const TOOL_RESULT = "order 4411: shipped on the 3rd";
export const ANSWER = "Order 4411 shipped on the 3rd.";

export interface TracedMention {
  receiver: OtlpReceiver;
  h: Harness;
  tracing: Tracing;
  /** The one turn's spans (all of its trace). */
  turn: ReceivedSpan[];
  close(): Promise<void>;
}

export async function tracedMention(content: boolean): Promise<TracedMention> {
  const receiver = await startOtlpReceiver();
  // The SDK's batch goes out every 50 ms instead of 5 s (the standard variable, read by the SDK).
  process.env.OTEL_BSP_SCHEDULE_DELAY = "50";
  const tracing = await startTracing(
    {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_SERVICE_NAME: "neo-test",
      NEO_TRACE_CONTENT: content,
    },
    "instance-a",
  );
  const h = await startHarness({
    tools: { orders__lookup: () => ({ content: TOOL_RESULT, isError: false }) },
    turns: [
      {
        reply: {
          toolCalls: [{ name: "orders__lookup", arguments: { id: "4411" } }],
          usage: { prompt: 120, completion: 12, cached: 100 },
        },
      },
      { reply: { text: ANSWER, usage: { prompt: 160, completion: 9 } } },
    ],
  });
  await h.slack.event(envelope(mention("C1", "UANN", QUESTION)));
  await h.fake.waitFor(
    () => h.fake.callsTo("chat.postMessage").some((c) => String(c.args.text).includes("4411")),
    "answer",
  );
  const root = (s: ReceivedSpan) => s.name === "invoke_agent Neo";
  await receiver.waitFor((spans) => spans.some(root), "the turn's span");
  const traceId = receiver.spans.find(root)!.traceId;
  return {
    receiver,
    h,
    tracing,
    turn: receiver.spans.filter((s) => s.traceId === traceId),
    close: async () => {
      await h.close();
      await tracing.shutdown();
      await receiver.close();
    },
  };
}
