/**
 * OpenTelemetry for every service. The SDK starts only when OTEL_EXPORTER_OTLP_ENDPOINT is
 * set, so a developer machine pays nothing; then trace context crosses NATS in message
 * headers. Without it, spans and propagation are skipped altogether (see NO_SPAN).
 */
import { INVALID_SPAN_CONTEXT, context, propagation, trace, SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';

let sdk: { shutdown(): Promise<void> } | undefined;

export async function startTelemetry(serviceName: string): Promise<void> {
  if (!process.env.OTEL_EXPORTER_OTLP_ENDPOINT || sdk) return;
  const [{ NodeSDK }, { OTLPTraceExporter }, { HttpInstrumentation }, { PgInstrumentation }, { IORedisInstrumentation }, { PinoInstrumentation }] =
    await Promise.all([
      import('@opentelemetry/sdk-node'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/instrumentation-http'),
      import('@opentelemetry/instrumentation-pg'),
      import('@opentelemetry/instrumentation-ioredis'),
      import('@opentelemetry/instrumentation-pino'),
    ]);
  const s = new NodeSDK({
    serviceName,
    traceExporter: new OTLPTraceExporter(),
    instrumentations: [
      new HttpInstrumentation(),
      new PgInstrumentation(),
      new IORedisInstrumentation(),
      new PinoInstrumentation(),
    ],
  });
  s.start();
  sdk = s;
}

export async function stopTelemetry(): Promise<void> {
  await sdk?.shutdown().catch(() => undefined);
  sdk = undefined;
}

const tracer = () => trace.getTracer('zc');

/**
 * Without the SDK there is nothing to record or propagate, and going through the API's no-op
 * context and span machinery on every bus message cost a few percent of a busy gateway's CPU
 * (profiled under fan-out), so spans are skipped altogether.
 */
const NO_SPAN: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** Copies the active trace context into a plain header carrier. */
export function injectTraceHeaders(carrier: Record<string, string>): Record<string, string> {
  if (!sdk) return carrier;
  propagation.inject(context.active(), carrier);
  return carrier;
}

/**
 * Runs `fn` inside a span whose parent is the context found in `carrier`.
 * `messaging.system` is "nats": not a well-known semconv value, documented in shared/README.
 */
export async function withSpan<T>(
  name: string,
  kind: 'server' | 'client' | 'consumer' | 'producer',
  attributes: Record<string, string | number>,
  carrier: Record<string, string> | undefined,
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  if (!sdk) return fn(NO_SPAN);
  const parent = carrier ? propagation.extract(context.active(), carrier) : context.active();
  const spanKind = { server: SpanKind.SERVER, client: SpanKind.CLIENT, consumer: SpanKind.CONSUMER, producer: SpanKind.PRODUCER }[kind];
  return context.with(parent, () =>
    tracer().startActiveSpan(name, { kind: spanKind, attributes: { 'messaging.system': 'nats', ...attributes } }, async (span) => {
      try {
        return await fn(span);
      } catch (e) {
        const status = (e as { httpStatus?: number }).httpStatus ?? 500;
        if (status >= 500) {
          span.recordException(e as Error);
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        throw e;
      } finally {
        span.end();
      }
    }),
  );
}

/** The active trace id, for log lines; undefined when tracing is off. */
export function currentTraceId(): string | undefined {
  const ctx = trace.getSpan(context.active())?.spanContext();
  return ctx && trace.isSpanContextValid(ctx) ? ctx.traceId : undefined;
}
