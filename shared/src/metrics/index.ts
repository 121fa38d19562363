/**
 * Application metrics by Prometheus' conventions (operations.md §2.3): base units, `_total`
 * counters, and labels of bounded cardinality only (route templates, never ids).
 */
import { Counter, Histogram, type Metric, type Registry } from 'prom-client';

/** Latency buckets in seconds: 1 ms to a parked long-poll's minute. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 90];

export interface HttpMetrics {
  observe(route: string, method: string, status: number, seconds: number): void;
}

/** One route/method/status-class series: its histogram's counts per bucket (not cumulative), sum and count. */
interface HttpSeries {
  labels: { route: string; method: string; status_class: string };
  perBucket: number[];
  sum: number;
  count: number;
}

/**
 * A metric of the registry read from the HTTP series (prom-client's exposition and JSON, as
 * its own Histogram and Counter give them: same names, labels, order and values).
 */
interface ExportedMetric {
  name: string;
  help: string;
  type: 'histogram' | 'counter';
  aggregator: 'sum';
  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: unknown[] }>;
  getForPromString?(): Promise<{ name: string; help: string; type: string; aggregator: string; values: unknown[] }>;
  reset(): void;
}

/**
 * RED for an HTTP server: request count, errors (status_class 5xx) and duration, per route
 * (`zc_http_requests_total`, `zc_http_request_duration_seconds`). Every request observes
 * them, so each observation is a few additions on a series found through two maps, and the
 * series are shaped into prom-client's values only when scraped: prom-client's own observe
 * (labels validated, hashed and copied on every call) was about 4% of a presence ping's CPU.
 */
export function httpMetrics(registry: Registry): HttpMetrics {
  const bounds = LATENCY_BUCKETS;
  let byRoute = new Map<string, Map<string, Array<HttpSeries | undefined>>>();
  const series = (): HttpSeries[] => [...byRoute.values()].flatMap((m) => [...m.values()].flatMap((a) => a.filter((x): x is HttpSeries => x !== undefined)));
  const reset = () => {
    byRoute = new Map();
  };
  const info = (name: string, help: string, type: 'histogram' | 'counter') => ({ name, help, type, aggregator: 'sum' as const });

  const durationName = 'zc_http_request_duration_seconds';
  const durationInfo = info(durationName, 'HTTP request duration by route template', 'histogram');
  /** Bucket, +Inf, sum and count values of each series, the series' labels beside (prom-client's getForPromString). */
  const durationValues = () =>
    series().flatMap((s) => {
      let acc = 0;
      const shared = s.labels;
      const buckets = bounds.map((le, i) => ({ labels: { le }, sharedLabels: shared, value: (acc += s.perBucket[i] ?? 0), metricName: `${durationName}_bucket`, exemplar: null }));
      return [
        ...buckets,
        { labels: { le: '+Inf' }, sharedLabels: shared, value: s.count, metricName: `${durationName}_bucket`, exemplar: null },
        { labels: {}, sharedLabels: shared, value: s.sum, metricName: `${durationName}_sum`, exemplar: undefined },
        { labels: {}, sharedLabels: shared, value: s.count, metricName: `${durationName}_count`, exemplar: undefined },
      ];
    });
  const duration: ExportedMetric = {
    ...durationInfo,
    getForPromString: async () => ({ ...durationInfo, values: durationValues() }),
    // The JSON form has each value's labels whole (prom-client's splayLabels).
    get: async () => ({ ...durationInfo, values: durationValues().map(({ sharedLabels, ...v }) => ({ ...v, labels: { ...sharedLabels, ...v.labels } })) }),
    reset,
  };
  const totalInfo = info('zc_http_requests_total', 'HTTP requests by route template and status class', 'counter');
  const total: ExportedMetric = {
    ...totalInfo,
    get: async () => ({ ...totalInfo, values: series().map((s) => ({ value: s.count, labels: s.labels })) }),
    reset,
  };
  // prom-client's registry takes any metric with a name, get() and reset(); its types list only its own classes.
  registry.registerMetric(duration as unknown as Metric);
  registry.registerMetric(total as unknown as Metric);

  return {
    observe(route, method, status, seconds) {
      let byMethod = byRoute.get(route);
      if (!byMethod) byRoute.set(route, (byMethod = new Map()));
      let byClass = byMethod.get(method);
      if (!byClass) byMethod.set(method, (byClass = []));
      const cls = Math.floor(status / 100);
      let s = byClass[cls];
      if (!s) byClass[cls] = s = { labels: { route, method, status_class: `${cls}xx` }, perBucket: bounds.map(() => 0), sum: 0, count: 0 };
      let i = 0;
      while (i < bounds.length && seconds > (bounds[i] as number)) i++;
      if (i < bounds.length) s.perBucket[i] = (s.perBucket[i] ?? 0) + 1;
      s.sum += seconds;
      s.count += 1;
    },
  };
}

/** How a bus request ended, from the serving side. */
export type RequestOutcome = 'ok' | 'client_error' | 'unavailable' | 'error';
/** How a consumed event ended. */
export type EventOutcome = 'ok' | 'retry' | 'dead_letter' | 'malformed';

export interface BusMetrics {
  request(subject: string, outcome: RequestOutcome, seconds: number): void;
  event(subject: string, outcome: EventOutcome, seconds: number): void;
}

/**
 * RED per bus subject, labelled with the contract's subject (`messages.v1.send`: no release
 * prefix, no replica name), so every replica and release shares the series' names.
 */
export function busMetrics(registry: Registry): BusMetrics {
  const reqDuration = new Histogram({ name: 'zc_bus_request_duration_seconds', help: 'Time serving a NATS request, by contract subject', labelNames: ['subject'], buckets: LATENCY_BUCKETS, registers: [registry] });
  const requests = new Counter({ name: 'zc_bus_requests_total', help: 'NATS requests served, by contract subject and outcome (ok, client_error, unavailable, error)', labelNames: ['subject', 'outcome'], registers: [registry] });
  const evDuration = new Histogram({ name: 'zc_bus_event_duration_seconds', help: 'Time handling a JetStream event, by contract subject', labelNames: ['subject'], buckets: LATENCY_BUCKETS, registers: [registry] });
  const events = new Counter({ name: 'zc_bus_events_total', help: 'JetStream events handled, by contract subject and outcome (ok, retry, dead_letter, malformed)', labelNames: ['subject', 'outcome'], registers: [registry] });
  return {
    request(subject, outcome, seconds) {
      requests.inc({ subject, outcome });
      reqDuration.observe({ subject }, seconds);
    },
    event(subject, outcome, seconds) {
      events.inc({ subject, outcome });
      if (outcome !== 'malformed') evDuration.observe({ subject }, seconds);
    },
  };
}

/**
 * One async read shared by several gauges' `collect` in a scrape (prom-client collects each
 * metric separately): the first caller reads, the others within `ms` reuse its answer.
 */
export function sharedRead<T>(read: () => Promise<T>, ms = 1_000): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | undefined;
  return () => {
    if (!last || performance.now() - last.at > ms) last = { at: performance.now(), value: read() };
    return last.value;
  };
}
