/**
 * Application metrics by Prometheus' conventions (operations.md §2.3): base units, `_total`
 * counters, and labels of bounded cardinality only (route templates, never ids).
 */
import { Counter, Histogram, type Registry } from 'prom-client';

/** Latency buckets in seconds: 1 ms to a parked long-poll's minute. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 90];

export interface HttpMetrics {
  observe(route: string, method: string, status: number, seconds: number): void;
}

/** RED for an HTTP server: request count, errors (status_class 5xx) and duration, per route. */
export function httpMetrics(registry: Registry): HttpMetrics {
  const labelNames = ['route', 'method', 'status_class'] as const;
  const duration = new Histogram({ name: 'zc_http_request_duration_seconds', help: 'HTTP request duration by route template', labelNames, buckets: LATENCY_BUCKETS, registers: [registry] });
  const total = new Counter({ name: 'zc_http_requests_total', help: 'HTTP requests by route template and status class', labelNames, registers: [registry] });
  return {
    observe(route, method, status, seconds) {
      const labels = { route, method, status_class: `${Math.floor(status / 100)}xx` };
      duration.observe(labels, seconds);
      total.inc(labels);
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
