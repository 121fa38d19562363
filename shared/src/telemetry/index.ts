/**
 * OpenTelemetry for every service. The tracer provider starts only when
 * OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, so a developer
 * machine pays nothing; the trace context still crosses NATS through the global propagator (a
 * no-op without a provider). It must start from the preload (`@zc/shared/instrumentation`,
 * given to node with `--import`) so that http, pg and ioredis are patched before any module
 * loads them.
 */
import { INVALID_SPAN_CONTEXT, context, propagation, trace, SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';

let provider: { shutdown(): Promise<void> } | undefined;

/** Whether an OTLP endpoint is configured (and the SDK not switched off by OTEL_SDK_DISABLED). */
export function telemetryEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED === 'true') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/** Whether spans are being recorded and exported in this process. */
export function telemetryStarted(): boolean {
  return provider !== undefined;
}

/**
 * Starts the tracer provider (OTLP over HTTP; endpoint, headers, sampler and resource
 * attributes from the standard OTEL_* variables) and the http, pg and ioredis
 * instrumentations. Only the trace SDK is loaded, not the whole Node SDK with its metric and
 * log exporters, gRPC and Zipkin: the image stays small.
 */
export async function startTelemetry(serviceName: string, instance?: string): Promise<void> {
  if (!telemetryEnabled() || provider) return;
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { registerInstrumentations }, resources, { HttpInstrumentation }, { PgInstrumentation }, { IORedisInstrumentation }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-node'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/instrumentation'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/instrumentation-http'),
      import('@opentelemetry/instrumentation-pg'),
      import('@opentelemetry/instrumentation-ioredis'),
    ]);
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) win over our defaults.
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ 'service.name': serviceName, ...(instance ? { 'service.instance.id': instance } : {}) }))
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const p = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
  // Global tracer provider, AsyncLocalStorage context manager, W3C trace-context propagator.
  p.register();
  registerInstrumentations({
    tracerProvider: p,
    instrumentations: [
      // Probes and scrapes are not requests anyone traces.
      new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => /^\/(livez|readyz|healthz|metrics)\b/.test(req.url ?? '') }),
      new PgInstrumentation({ requireParentSpan: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
    ],
  });
  provider = p;
}

/** Flushes what is buffered and stops exporting (the end of a graceful shutdown). */
export async function stopTelemetry(): Promise<void> {
  await provider?.shutdown().catch(() => undefined);
  provider = undefined;
}

const tracer = () => trace.getTracer('zc');

/**
 * Without a provider there is nothing to record or propagate, and going through the API's
 * no-op context and span machinery on every bus message cost about 2% of a busy gateway's
 * CPU (profiled under fan-out), so spans and propagation are skipped altogether.
 */
const NO_SPAN: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** Copies the active trace context into a plain header carrier. */
export function injectTraceHeaders(carrier: Record<string, string>): Record<string, string> {
  if (!provider) return carrier;
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
  if (!provider) return fn(NO_SPAN);
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

/**
 * Names the active HTTP server span after its route template (`POST /api/v1/messages`), as
 * the semantic conventions ask; the http instrumentation alone only knows the method.
 */
export function nameServerSpan(method: string, route: string): void {
  const span = trace.getActiveSpan();
  if (!span?.isRecording()) return;
  span.updateName(`${method} ${route}`);
  span.setAttribute('http.route', route);
}

/** The active span's ids, for log lines; undefined when tracing is off or no span is active. */
export function currentSpanIds(): { trace_id: string; span_id: string } | undefined {
  const ctx = trace.getSpan(context.active())?.spanContext();
  return ctx && trace.isSpanContextValid(ctx) ? { trace_id: ctx.traceId, span_id: ctx.spanId } : undefined;
}

/** The active trace id, for log lines; undefined when tracing is off. */
export function currentTraceId(): string | undefined {
  return currentSpanIds()?.trace_id;
}

/**
 * The clock of ZC_DELIVERY_TRACE's per-hop stamps (outbox relay, events appender, poll hub,
 * gateway): wall-clock milliseconds with sub-millisecond precision, so stamps taken in
 * different processes on one machine can be subtracted.
 */
export function traceClockMs(): number {
  return performance.timeOrigin + performance.now();
}
