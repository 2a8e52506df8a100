/**
 * OpenTelemetry tracing, on when `OTEL_EXPORTER_OTLP_ENDPOINT` is set: the SDK is imported only then
 * (unset, the process never loads it and every span is the API's no-op). Spans go to
 * `{endpoint}/v1/traces` over OTLP/HTTP, protobuf or JSON (`OTEL_EXPORTER_OTLP_PROTOCOL`), batched;
 * the resource names the service (`OTEL_SERVICE_NAME`) and this instance (`service.instance.id`).
 * Other standard variables the exporter reads itself (`OTEL_EXPORTER_OTLP_HEADERS`, timeouts).
 */
import { configureSpans } from "./spans.js";

export interface TracingSettings {
  OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined;
  OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf" | "http/json";
  OTEL_SERVICE_NAME: string;
  NEO_TRACE_CONTENT: boolean;
}

export interface Tracing {
  /** Whether spans are exported. */
  readonly enabled: boolean;
  /** Send what is batched now. */
  flush(): Promise<void>;
  /** Send what is batched and stop (on stop, so the last turns' spans are not lost). */
  shutdown(): Promise<void>;
}

const OFF: Tracing = { enabled: false, flush: async () => {}, shutdown: async () => {} };

export async function startTracing(cfg: TracingSettings, instance: string): Promise<Tracing> {
  configureSpans({ content: cfg.NEO_TRACE_CONTENT, instance, on: Boolean(cfg.OTEL_EXPORTER_OTLP_ENDPOINT) });
  if (!cfg.OTEL_EXPORTER_OTLP_ENDPOINT) return OFF;
  const [{ NodeTracerProvider, BatchSpanProcessor }, { resourceFromAttributes }, exporterModule] =
    await Promise.all([
      import("@opentelemetry/sdk-trace-node"),
      import("@opentelemetry/resources"),
      cfg.OTEL_EXPORTER_OTLP_PROTOCOL === "http/json"
        ? import("@opentelemetry/exporter-trace-otlp-http")
        : import("@opentelemetry/exporter-trace-otlp-proto"),
    ]);
  const url = `${cfg.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, "")}/v1/traces`;
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({
      "service.name": cfg.OTEL_SERVICE_NAME,
      "service.instance.id": instance,
    }),
    spanProcessors: [new BatchSpanProcessor(new exporterModule.OTLPTraceExporter({ url }))],
  });
  // Registers the AsyncLocalStorage context manager too: spans nest across awaits.
  provider.register();
  return {
    enabled: true,
    async flush() {
      await provider.forceFlush();
    },
    async shutdown() {
      await provider.shutdown();
    },
  };
}
