/**
 * The load the faults are injected under, and what it observed: senders that retry each send
 * with its Idempotency-Key until it is acknowledged (as a careful client would), and clients
 * long-polling their event queues (re-registering after BAD_EVENT_QUEUE_ID, as real clients do).
 */

export interface Account {
  email: string;
  api_key: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Statuses seen, for the 5xx column: 503 is the expected answer to an outage, others are not. */
export class Statuses {
  counts = new Map<number, number>();
  add(status: number): void {
    this.counts.set(status, (this.counts.get(status) ?? 0) + 1);
  }
  /** 5xx other than 503. */
  get unexpected5xx(): number {
    let n = 0;
    for (const [s, c] of this.counts) if (s >= 500 && s !== 503) n += c;
    return n;
  }
  get unavailable(): number {
    return this.counts.get(503) ?? 0;
  }
  reset(): void {
    this.counts.clear();
  }
}

interface HttpResult {
  status: number;
  body: Record<string, unknown>;
}

export class Http {
  private next = 0;
  constructor(
    private readonly urls: string[],
    readonly statuses: Statuses,
  ) {}

  /** One request through the next gateway; network failures come back as status 0. */
  async call(a: Account, method: 'GET' | 'POST' | 'DELETE', path: string, params: Record<string, string>, o: { timeoutMs?: number; headers?: Record<string, string> } = {}): Promise<HttpResult> {
    const base = this.urls[this.next++ % this.urls.length] as string;
    const qs = new URLSearchParams(params).toString();
    const url = method === 'POST' ? `${base}/api/v1${path}` : `${base}/api/v1${path}?${qs}`;
    try {
      const res = await fetch(url, {
        method,
        headers: {
          authorization: `Basic ${Buffer.from(`${a.email}:${a.api_key}`).toString('base64')}`,
          ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
          ...o.headers,
        },
        ...(method === 'POST' ? { body: qs } : {}),
        signal: AbortSignal.timeout(o.timeoutMs ?? 20_000),
      });
      this.statuses.add(res.status);
      const text = await res.text();
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        body = { raw: text.slice(0, 200) };
      }
      return { status: res.status, body };
    } catch {
      return { status: 0, body: {} };
    }
  }
}

export interface SendRecord {
  key: string;
  /** When the first attempt started. */
  firstAttemptAt: number;
  id?: number;
  ackedAt?: number;
  attempts: number;
}

/** Senders posting to one stream, each send retried with its key until acknowledged. */
export class Senders {
  readonly sends = new Map<string, SendRecord>();
  /** 4xx answers to sends (a send that should have worked), with their bodies. */
  readonly refusals: string[] = [];
  private running = false;
  private loops: Promise<void>[] = [];
  private phase = '';
  private seq = 0;

  constructor(
    private readonly http: Http,
    private readonly sender: Account,
    private readonly stream: string,
    private readonly concurrency: number,
    private readonly pauseMs: number,
  ) {}

  start(phase: string): void {
    this.phase = phase;
    this.sends.clear();
    this.refusals.length = 0;
    this.running = true;
    this.loops = Array.from({ length: this.concurrency }, () => this.loop());
  }

  /** Stops starting new sends and waits for the ones in flight (each retried until acknowledged or given up). */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  private async loop(): Promise<void> {
    while (this.running) {
      await this.sendOne(`${this.phase}-${this.seq++}`);
      await sleep(this.pauseMs);
    }
  }

  /** Sends with retries; resolves when acknowledged, refused, or after 90 s of trying. */
  async sendOne(key: string, topic = this.phase): Promise<SendRecord> {
    const rec: SendRecord = { key, firstAttemptAt: Date.now(), attempts: 0 };
    this.sends.set(key, rec);
    const giveUp = Date.now() + 90_000;
    while (Date.now() < giveUp) {
      rec.attempts++;
      const r = await this.http.call(this.sender, 'POST', '/messages', { type: 'stream', to: this.stream, topic, content: key }, { headers: { 'idempotency-key': key } });
      if (r.status === 200) {
        rec.id = Number(r.body.id);
        rec.ackedAt = Date.now();
        return rec;
      }
      if (r.status >= 400 && r.status < 500 && r.status !== 429) {
        this.refusals.push(`${key}: ${r.status} ${JSON.stringify(r.body)}`);
        return rec;
      }
      await sleep(250);
    }
    return rec;
  }
}

export interface QueueLog {
  queueId: string;
  registeredAt: number;
  /** Message ids in the order they arrived, with their content (the send key). */
  received: Array<{ id: number; key: string; at: number }>;
  lastEventId: number;
  invalidated: boolean;
  invalidatedAt?: number;
}

/** One client long-polling its queue, re-registering when the queue is gone. */
export class Poller {
  readonly queues: QueueLog[] = [];
  private running = false;
  private loopDone?: Promise<void>;
  /** Unexpected poll errors (not 503, not BAD_EVENT_QUEUE_ID). */
  readonly errors: string[] = [];

  constructor(
    private readonly http: Http,
    private readonly account: Account,
    private readonly pollTimeoutMs: number,
  ) {}

  get current(): QueueLog | undefined {
    const q = this.queues[this.queues.length - 1];
    return q && !q.invalidated ? q : undefined;
  }

  async start(): Promise<void> {
    this.running = true;
    await this.register();
    this.loopDone = this.loop();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loopDone;
  }

  private async register(): Promise<void> {
    while (this.running) {
      const r = await this.http.call(this.account, 'POST', '/register', { event_types: JSON.stringify(['message']) });
      if (r.status === 200) {
        this.queues.push({ queueId: String(r.body.queue_id), registeredAt: Date.now(), received: [], invalidated: false, lastEventId: Number(r.body.last_event_id) });
        return;
      }
      await sleep(250);
    }
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const q = this.current;
      if (!q) {
        await this.register();
        continue;
      }
      const r = await this.http.call(this.account, 'GET', '/events', { queue_id: q.queueId, last_event_id: String(q.lastEventId) }, { timeoutMs: this.pollTimeoutMs });
      if (r.status === 200) {
        for (const e of (r.body.events as Array<Record<string, unknown>>) ?? []) {
          q.lastEventId = Math.max(q.lastEventId, Number(e.id));
          if (e.type === 'message') {
            const m = e.message as { id: number; content: string };
            q.received.push({ id: m.id, key: m.content.replace(/<[^>]+>/g, ''), at: Date.now() });
          }
        }
        continue;
      }
      if (r.status === 400 && r.body.code === 'BAD_EVENT_QUEUE_ID') {
        q.invalidated = true;
        q.invalidatedAt = Date.now();
        continue;
      }
      if (r.status !== 0 && r.status !== 503 && r.status !== 429) this.errors.push(`${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
      await sleep(250);
    }
  }
}
