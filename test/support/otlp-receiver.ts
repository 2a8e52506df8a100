/**
 * A local OTLP/HTTP trace receiver (JSON encoding, `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`): what a
 * collector would get at `/v1/traces`, flattened to one record per span with its resource's
 * attributes, as the OTLP JSON mapping writes them (ids in hex, attribute values as AnyValue).
 */
import { createServer, type Server } from "node:http";

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
};
type KeyValue = { key: string; value: AnyValue };

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  startTimeUnixNano: string;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
}

const anyValue = (v: AnyValue): unknown => {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(anyValue);
  return undefined;
};
const attrs = (kvs: KeyValue[] | undefined): Record<string, unknown> =>
  Object.fromEntries((kvs ?? []).map((kv) => [kv.key, anyValue(kv.value)]));

export interface OtlpReceiver {
  /** Base URL for `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  url: string;
  spans: ReceivedSpan[];
  /** Every request body, as received (to search for text that must not be there). */
  raw: string[];
  /** Resolves once `pred` holds over the spans received (checked at each export). */
  waitFor(pred: (spans: ReceivedSpan[]) => boolean, what: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const raw: string[] = [];
  const waiters = new Set<() => void>();
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => {
      body += d.toString();
    });
    req.on("end", () => {
      if (req.url !== "/v1/traces" || req.headers["content-type"] !== "application/json") {
        res.writeHead(415).end();
        return;
      }
      raw.push(body);
      const msg = JSON.parse(body) as {
        resourceSpans?: Array<{
          resource?: { attributes?: KeyValue[] };
          scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }>;
        }>;
      };
      for (const rs of msg.resourceSpans ?? []) {
        const resource = attrs(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            spans.push({
              traceId: String(s.traceId),
              spanId: String(s.spanId),
              parentSpanId: String(s.parentSpanId ?? ""),
              name: String(s.name),
              startTimeUnixNano: String(s.startTimeUnixNano),
              attributes: attrs(s.attributes as KeyValue[] | undefined),
              resource,
            });
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
      for (const w of [...waiters]) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    raw,
    waitFor: (pred, what, timeoutMs = 20_000) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!pred(spans)) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${what}; spans: ${spans.map((s) => s.name).join(", ")}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
