/**
 * A local OTLP/HTTP trace receiver for tests: accepts what the services' exporter posts to
 * /v1/traces (OTLP/JSON, hex ids) and keeps every span with its service's name.
 */
import http from 'node:http';

export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };
interface ExportRequest {
  resourceSpans?: Array<{ resource?: { attributes?: KeyValue[] }; scopeSpans?: Array<{ spans?: Array<{ traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: KeyValue[] }> }> }>;
}

function flat(kvs: KeyValue[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of kvs ?? []) {
    const v = value.stringValue ?? value.boolValue ?? value.doubleValue ?? (value.intValue !== undefined ? Number(value.intValue) : undefined);
    if (v !== undefined) out[key] = v;
  }
  return out;
}

export interface OtlpReceiver {
  /** OTEL_EXPORTER_OTLP_ENDPOINT for the exporters. */
  endpoint: string;
  spans: ReceivedSpan[];
  /** Content types seen, to tell a wrong exporter protocol from a missing span. */
  contentTypes: Set<string>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes = new Set<string>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      contentTypes.add(String(req.headers['content-type']));
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).includes('json')) {
        res.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest;
      for (const rs of body.resourceSpans ?? []) {
        const service = String(flat(rs.resource?.attributes)['service.name']);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              service,
              traceId: s.traceId,
              spanId: s.spanId,
              ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
              name: s.name,
              kind: s.kind,
              attributes: flat(s.attributes),
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
