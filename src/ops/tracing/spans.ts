/**
 * Spans for every turn, through the OpenTelemetry API. Without `startTracing` (no
 * `OTEL_EXPORTER_OTLP_ENDPOINT`) no SDK is loaded and the API's spans are no-ops: nothing is
 * recorded, kept or sent. Names and attributes follow the OpenTelemetry GenAI semantic conventions
 * (`invoke_agent`, `chat {model}`, `execute_tool {tool}`, `gen_ai.*`); Neo's own are `neo.*`.
 * Message text, tool arguments and results are attributes only with `NEO_TRACE_CONTENT=true`.
 */
import { hash } from "node:crypto";
import {
  type Attributes,
  type Context,
  context,
  INVALID_SPAN_CONTEXT,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TimeInput,
  TraceFlags,
  trace,
} from "@opentelemetry/api";

const tracer = trace.getTracer("neo");

/**
 * Process-wide settings `startTracing` fills in. `on` is whether spans are exported at all: off, a
 * span is not even started through the API (its no-op costs a context switch per span on every
 * answer's path) and its attributes are never computed.
 */
const settings = { content: false, instance: "", on: false };

export function configureSpans(s: { content: boolean; instance: string; on: boolean }): void {
  settings.content = s.content;
  settings.instance = s.instance;
  settings.on = s.on;
}

/** The span `work` gets when tracing is off: the API's own non-recording span. */
const OFF_SPAN: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** Whether text may be exported (`NEO_TRACE_CONTENT=true`). */
export const traceContent = (): boolean => settings.content;

/** This instance, for the turn's span (`service.instance.id` is on every span's resource too). */
export const traceInstance = (): string => settings.instance;

/** A conversation key as traces show it: a stable digest, never the platform's ids. */
export const hashedConversation = (key: string): string => hash("sha256", key, "hex").slice(0, 16);

export interface SpanOptions {
  kind?: SpanKind;
  /** A function when they cost something to compute: called only when tracing is on. */
  attributes?: Attributes | (() => Attributes);
  /** The parent; default the active context. */
  parent?: Context;
  startTime?: TimeInput;
}

/**
 * Run `work` in a new active span: children started inside nest under it. A rejection marks the
 * span as an error (its message, never its payload) and is rethrown; the span always ends.
 */
export async function inSpan<T>(
  name: string,
  opts: SpanOptions,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  if (!settings.on) return work(OFF_SPAN);
  const attributes = typeof opts.attributes === "function" ? opts.attributes() : opts.attributes;
  return tracer.startActiveSpan(
    name,
    {
      kind: opts.kind ?? SpanKind.INTERNAL,
      ...(attributes ? { attributes } : {}),
      ...(opts.startTime !== undefined ? { startTime: opts.startTime } : {}),
    },
    opts.parent ?? context.active(),
    async (span) => {
      try {
        return await work(span);
      } catch (err) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.name ?? "Error" });
        throw err;
      } finally {
        span.end();
      }
    },
  );
}

/** The active span (the API's no-op one when there is none). */
export const activeSpan = (): Span => trace.getActiveSpan() ?? trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** A span that already happened (a wait measured from its start): started and ended at once. */
export function pastSpan(name: string, startTime: TimeInput, attributes: Attributes = {}): void {
  if (!settings.on) return;
  tracer.startSpan(name, { startTime, attributes }, context.active()).end();
}

/** The W3C `traceparent` of `span` when it is recorded, to keep with the journal; else undefined. */
export function traceparentOf(span: Span): string | undefined {
  if (!span.isRecording()) return undefined;
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${(traceFlags & TraceFlags.SAMPLED ? 1 : 0).toString(16).padStart(2, "0")}`;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The context to continue a trace another instance started (its turn's `traceparent` from the
 * journal), so a resumed turn shows in the same trace; the root context when there is none.
 */
export function continuing(traceparent: string | undefined): Context {
  const m = traceparent ? TRACEPARENT.exec(traceparent) : null;
  if (!m) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: m[1]!,
    spanId: m[2]!,
    traceFlags: Number.parseInt(m[3]!, 16),
    isRemote: true,
  });
}

export { SpanKind };
