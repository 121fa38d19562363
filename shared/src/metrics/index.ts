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
