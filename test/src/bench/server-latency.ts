/**
 * The gateway's own view of a route's latency, from its `zc_http_request_duration_seconds`
 * histogram (shared/metrics): from the request's arrival in the process to its answer handed to
 * the kernel. Read before and after a step, it shows what the server took, apart from the
 * loopback, the load generator and the scheduler, which a client-side percentile includes.
 */

/** Cumulative counts of the route's 2xx answers by bucket bound (seconds; +Inf as Infinity). */
export type Buckets = Map<number, number>;

const BUCKET_LINE = /^zc_http_request_duration_seconds_bucket\{([^}]*)\}\s+(\S+)$/;
const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g;

/** The route's buckets in a /metrics text (summed over series, should there be several). */
export function routeBuckets(metrics: string, route: string, method: string): Buckets {
  const out: Buckets = new Map();
  for (const line of metrics.split('\n')) {
    const m = BUCKET_LINE.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...(m[1] as string).matchAll(LABEL)].map((x) => [x[1], x[2]]));
    if (labels.route !== route || labels.method !== method || labels.status_class !== '2xx') continue;
    const le = labels.le === '+Inf' ? Infinity : Number(labels.le);
    out.set(le, (out.get(le) ?? 0) + Number(m[2]));
  }
  return out;
}

export interface ServerLatency {
  /** Answers counted between the two readings. */
  count: number;
  /** The smallest bucket bound under which 99 % of them were answered (ms); Infinity if none. */
  p99AtMostMs: number;
  /** Share of them answered within `withinMs` (0-1). */
  shareWithin: number;
}

/** What the server took between two readings of the route's buckets. */
export function serverLatency(before: Buckets, after: Buckets, withinMs: number): ServerLatency {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const delta = (le: number) => (after.get(le) ?? 0) - (before.get(le) ?? 0);
  const count = delta(Infinity);
  const p99 = bounds.find((le) => count > 0 && delta(le) >= 0.99 * count) ?? Infinity;
  const within = bounds.filter((le) => le <= withinMs / 1000).pop();
  return { count, p99AtMostMs: p99 * 1000, shareWithin: count > 0 && within !== undefined ? delta(within) / count : 0 };
}
