/**
 * The typed NATS wrapper every service uses. Request/reply runs on core NATS in a queue
 * group named after the service (so replicas share the load); events run on JetStream
 * with a message id (duplicates dropped by the server) and durable consumers.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { gunzip as zlibGunzip, gzip as zlibGzip } from 'node:zlib';
import { connect } from '@nats-io/transport-node';
import { createInbox, Empty, headers as natsHeaders, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from '@nats-io/nats-core';
import { jetstream, jetstreamManager, AckPolicy, DeliverPolicy, type ConsumerInfo, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { AppError, asOutage, clientClosedRequest, fromWireError, isAppError, payloadTooLarge, serviceUnavailable, toWireError, type WireError } from '../errors/index.js';
import type { Logger } from '../logging/index.js';
import { Gauge, type Registry } from 'prom-client';
import { busMetrics, sharedRead, type BusMetrics, type EventOutcome } from '../metrics/index.js';
import { injectTraceHeaders, withSpan } from '../telemetry/index.js';
import { coalesceWrites } from './coalesce.js';
import {
  eventStreamName,
  type BroadcastContract,
  type DeliveredArgs,
  type EventContract,
  type PayloadOf,
  type ReplyOf,
  type RequestOf,
  type RpcContract,
} from './contract.js';
import { ALIVE_EVERY_MS, Liveness, type Beat } from './liveness.js';

import { RawJson } from './raw-json.js';

export * from './contract.js';
export * from './raw-json.js';

type ReplyBody = { ok: unknown } | { err: WireError };

/** What a listener learns about a message besides its payload. */
export interface ListenMeta {
  /** `Nats-Msg-Id` of a relayed domain event (`<schema>:<outbox id>`); absent on broadcasts. */
  msgId?: string;
}

/** What a consumer learns about an event besides its payload. */
export interface EventMeta {
  /** JetStream stream sequence: grows in the order events were stored. */
  seq: number;
  redelivered: boolean;
  /** Service (schema) whose outbox wrote the event, and the writing transaction's id. */
  origin?: string;
  txid?: number;
  /** `Nats-Msg-Id`: `<schema>:<outbox id>` for relayed events (orders one owner's events). */
  msgId?: string;
}

export interface HandlerContext {
  subject: string;
  log: Logger;
  /** When the caller stops waiting (ms since the epoch); work after it is wasted. */
  deadline?: number;
  /** Aborted when the caller has gone (its HTTP client disconnected): work after it is wasted too. */
  signal?: AbortSignal;
}

/**
 * Deadlines travel with requests (DESIGN.md): the caller's timeout goes in this header as an
 * absolute time, a handler's own requests inherit what is left of it, and a request whose
 * caller has already given up is not worked on at all (after an outage, a backlog of requests
 * nobody waits for any more would otherwise delay recovery by its whole length).
 */
const DEADLINE_HEADER = 'Zc-Deadline';
/**
 * Acknowledged requests (failover, see `request`): the caller asks with `Zc-Hold-Ack`, and the
 * replica that took the request answers soon with an empty message naming itself in
 * `Zc-Held-By`, then later with the reply.
 */
const HOLD_ACK_HEADER = 'Zc-Hold-Ack';
const HELD_BY_HEADER = 'Zc-Held-By';
/**
 * The ack goes only to a request still unanswered after one to two of these (see `AckLater`):
 * most are answered sooner (a long-poll finding its events, any quick request), and an ack
 * each was one more socket write per request on both sides, since requests arriving one by
 * one are each handled in a turn of their own.
 */
const ACK_AFTER_MS = 100;
/** A request that must be started by a time closer than this is acknowledged at once (`Zc-Start-By`). */
const ACK_NOW_WITHIN_MS = 500;
/**
 * Failover (`request` with another live replica to turn to): a replica that cannot start the
 * request by this time (ms since the epoch) drops it, so a request not acknowledged in time
 * has not been worked on and can go to another replica, whatever it does — even if the
 * replica that got it was paused and resumes later.
 */
const START_BY_HEADER = 'Zc-Start-By';
/** A replica says it took a request within this, or the request goes to another (failover). */
const ACK_WITHIN_MS = 1_000;
/** How often pending requests are checked for a missing ack or a silent holder. */
const SWEEP_EVERY_MS = 250;
/**
 * Cancellation when the caller leaves: a request made while a `signal` is current carries this
 * id (`<caller replica>.<token>`); when the signal aborts, the caller publishes the id on
 * `bus.cancel` and the replica working on it aborts the handler's own signal (which cancels its
 * PostgreSQL statements, see db/index.ts, and the requests it made in turn). A broadcast, since
 * the caller does not always know which replica of the queue group took the request; cancels
 * are rare (a client gone mid-request), so every replica hearing each is cheap.
 */
const REQUEST_ID_HEADER = 'Zc-Request-Id';
const CANCEL_SUBJECT = 'bus.cancel';

/** What bounds the work of the request being handled: when its caller stops waiting, or leaves. */
interface RequestBounds {
  deadline?: number;
  signal?: AbortSignal;
}
const bounds = new AsyncLocalStorage<RequestBounds>();

/**
 * Bounded work in flight (`runBounded`). On Node 20 an AsyncLocalStorage, once run, keeps
 * promise hooks on for the life of the process: every promise anywhere then runs hook code
 * when created, awaited and settled (about 5% of a gateway's CPU under fan-out, whose one
 * GET of the bench's start, or of any client, switched them on for good). The storage is
 * disabled whenever no bounded work is in flight, which turns the hooks off. Work a request
 * started that outlives it is unbounded from then on if nothing else bounded is running
 * (as `detachedFromDeadline` makes it), and keeps the finished request's bounds otherwise,
 * as it always did.
 */
let boundedInFlight = 0;

function releaseBounds(): void {
  if (--boundedInFlight === 0) bounds.disable();
}

/** Runs `fn` with `store` as the current bounds, counted in flight until what it returns settles. */
function runBounded<T>(store: RequestBounds, fn: () => T): T {
  boundedInFlight++;
  let result: T;
  try {
    result = bounds.run(store, fn);
  } catch (e) {
    releaseBounds();
    throw e;
  }
  if (result instanceof Promise) result.then(releaseBounds, releaseBounds);
  else releaseBounds();
  return result;
}

/** The deadline of the request being handled, if any (for work that should stop with it). */
export function currentDeadline(): number | undefined {
  return bounds.getStore()?.deadline;
}

/** Aborted when the caller of the request being handled has gone, if it can go (see withCallerSignal). */
export function currentSignal(): AbortSignal | undefined {
  return bounds.getStore()?.signal;
}

/**
 * Runs `fn` as work for a caller who may leave: `signal` aborts when it does (the gateway, for a
 * read whose HTTP client disconnected). Requests `fn` makes carry it to the serving replicas.
 */
export function withCallerSignal<T>(signal: AbortSignal, fn: () => T): T {
  return runBounded({ ...bounds.getStore(), signal }, fn);
}

/**
 * Runs `fn` outside any request's deadline (and cancellation): for work a request starts but
 * that serves others too and outlives it (a writer draining a queue of many callers' sends).
 */
export function detachedFromDeadline<T>(fn: () => T): T {
  // With nothing bounded in flight the storage is off already (runBounded).
  return boundedInFlight > 0 ? bounds.exit(fn) : fn();
}

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();
function check(schema: TSchema, value: unknown): boolean {
  let c = compiled.get(schema);
  if (!c) {
    c = TypeCompiler.Compile(schema);
    compiled.set(schema, c);
  }
  return c.Check(value);
}

function headersToCarrier(h: MsgHdrs | undefined): Record<string, string> | undefined {
  if (!h) return undefined;
  const carrier: Record<string, string> = {};
  for (const k of ['traceparent', 'tracestate']) {
    const v = h.get(k);
    if (v) carrier[k] = v;
  }
  return carrier;
}

function carrierToHeaders(extra?: Record<string, string>): MsgHdrs {
  const h = natsHeaders();
  for (const [k, v] of Object.entries(injectTraceHeaders({}))) h.set(k, v);
  for (const [k, v] of Object.entries(extra ?? {})) h.set(k, v);
  return h;
}

const enc = new TextEncoder();
/** JetStream's de-duplication header, and how long a publish waits for its acknowledgement (the JetStream client's default). */
const MSG_ID_HEADER = 'Nats-Msg-Id';
const JS_PUBLISH_TIMEOUT_MS = 5_000;
const dec = new TextDecoder();

/**
 * Replies larger than this are gzipped (header `Zc-Encoding: gzip`): NATS refuses messages
 * over its max_payload (1 MiB by default), and JSON such as a realm's user list shrinks
 * about tenfold, which keeps realms of tens of thousands of users within it. Compression
 * runs in libuv's thread pool, off the event loop.
 */
const COMPRESS_REPLIES_OVER = 256 * 1024;
const ENCODING_HEADER = 'Zc-Encoding';
const gzip = promisify(zlibGzip);
const gunzip = promisify(zlibGunzip);

/** The start of every success reply's text: `requestRaw` takes what follows as the reply's JSON. */
const OK_PREFIX = '{"ok":';

async function encodeReply(body: ReplyBody): Promise<{ data: Uint8Array; headers?: MsgHdrs }> {
  // A handler's RawJson goes out as it is (see raw-json.ts), with the same framing as any reply.
  const text = 'ok' in body && body.ok instanceof RawJson ? `${OK_PREFIX}${body.ok.text}}` : JSON.stringify(body);
  const data = enc.encode(text);
  if (data.length <= COMPRESS_REPLIES_OVER) return { data };
  const headers = natsHeaders();
  headers.set(ENCODING_HEADER, 'gzip');
  // Level 1: several times faster than the default for a few per cent more bytes, and these
  // replies cross a local network once (the default level cost a 5,000-person /register 10 ms a hop).
  return { data: await gzip(data, { level: 1 }), headers };
}

async function decodeReply(m: Msg): Promise<Uint8Array> {
  return m.headers?.get(ENCODING_HEADER) === 'gzip' ? gunzip(m.data) : m.data;
}

/** An event's JSON bytes, gunzipped if the relay compressed it (see `publishRaw`). */
export async function eventBytes(m: { data: Uint8Array; headers?: MsgHdrs }): Promise<Uint8Array> {
  return m.headers?.get(ENCODING_HEADER) === 'gzip' ? gunzip(m.data) : m.data;
}

/** Whether the relay gzipped this event (its payload then needs the async `eventJson`). */
export function isCompressedEvent(m: { headers?: MsgHdrs }): boolean {
  return m.headers?.get(ENCODING_HEADER) === 'gzip';
}

/** An event's payload parsed; throws on malformed JSON. */
export async function eventJson(m: { data: Uint8Array; headers?: MsgHdrs }): Promise<unknown> {
  return JSON.parse(dec.decode(await eventBytes(m)));
}

/** Thrown by `publishRaw` for an event the server can never accept, even compressed. */
export class EventTooLarge extends Error {
  constructor(readonly bytes: number, readonly limit: number) {
    super(`event of ${bytes} bytes exceeds the server's max_payload of ${limit}`);
    this.name = 'EventTooLarge';
  }
}

/** Room left under max_payload for an event's headers (trace context, origin, encoding). */
const HEADER_ROOM = 4096;
/** NATS's default max_payload: what the deployments here run with (deploy/, k8s/). */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;
/**
 * The largest event (as sent: gzipped when large) the outbox relay can publish with the
 * default max_payload. Events are checked against it where they are written (`addToOutbox`),
 * so the change that would make one is refused instead of leaving a row nobody can relay.
 */
export const MAX_EVENT_BYTES = DEFAULT_MAX_PAYLOAD - HEADER_ROOM;

/** An event's payload as the relay sends it: gzipped (with a header saying so) when large. */
async function compressEvent(payload: string): Promise<{ data: Uint8Array; gzipped: boolean }> {
  const data = enc.encode(payload);
  if (data.length <= COMPRESS_REPLIES_OVER) return { data, gzipped: false };
  return { data: await gzip(data), gzipped: true };
}

/** Bytes `payload` takes on the wire as an event (small ones are measured without compressing). */
export async function eventWireBytes(payload: string): Promise<number> {
  const bytes = Buffer.byteLength(payload);
  if (bytes <= MAX_EVENT_BYTES) return bytes;
  return (await compressEvent(payload)).data.length;
}

export interface BusOptions {
  url: string;
  prefix: string;
  /** Connection name shown by the NATS server (service and instance). */
  name: string;
  log: Logger;
  defaultTimeoutMs?: number;
}

type AttemptOutcome = { msg: Msg } | { gaveUp: 'timeout' | 'unacknowledged' | 'holder lost' | 'no responders' | 'aborted'; holder?: string };

interface PendingAttempt {
  service: string;
  started: number;
  ackWithinMs?: number;
  acked: boolean;
  /** The replica holding the request: the one it was sent to by name, or the one that acknowledged. */
  holder?: string;
  heldSince: number;
  settle(out: AttemptOutcome): void;
}

function sendHoldAck(msg: Msg, holder: string): void {
  const h = natsHeaders();
  h.set(HELD_BY_HEADER, holder);
  msg.respond(Empty, { headers: h });
}

/**
 * Acks of requests still unanswered after ACK_AFTER_MS to twice that: two generations of
 * requests, and one timer (only while there are any) that acknowledges the older one.
 */
class AckLater {
  private young = new Map<Msg, string>();
  private old = new Map<Msg, string>();
  private timer?: NodeJS.Timeout;

  add(msg: Msg, holder: string): void {
    this.young.set(msg, holder);
    if (this.timer) return;
    this.timer = setInterval(() => {
      for (const [m, holder] of this.old) sendHoldAck(m, holder);
      this.old = this.young;
      this.young = new Map();
      if (this.old.size === 0) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    }, ACK_AFTER_MS);
    this.timer.unref();
  }

  /** The reply is going out: no ack needed any more. */
  answered(msg: Msg): void {
    if (!this.young.delete(msg)) this.old.delete(msg);
  }
}

/** Whether `req` may be sent again after the replica holding it went silent (RpcContract.safe). */
function isSafe<C extends RpcContract>(c: C, req: RequestOf<C>): boolean {
  return typeof c.safe === 'function' ? c.safe(req) : c.safe === true;
}

export interface ConsumeOptions {
  /** Durable consumer name, unique per consuming service and purpose. */
  durable: string;
  /** Deliver only new events to a consumer that does not exist yet (default: all). */
  deliverNew?: boolean;
  /** Messages fetched at once. */
  batch?: number;
  maxDeliver?: number;
  /**
   * consumeBatched only: when an event arrives after a quiet spell, wait this long for the
   * ones behind it before handling them, so a steady trickle is handled in batches rather
   * than one round trip (and one database write) per event. Only for consumers nobody waits
   * on (statistics); default 0.
   */
  lingerMs?: number;
}

const MALFORMED = Symbol('malformed');

function metaOf(m: JsMsg): EventMeta {
  return {
    seq: m.seq,
    redelivered: m.redelivered,
    origin: m.headers?.get('Zc-Origin') || undefined,
    txid: m.headers?.get('Zc-Txid') ? Number(m.headers.get('Zc-Txid')) : undefined,
    msgId: m.headers?.get('Nats-Msg-Id') || undefined,
  };
}

/** The JSON payload if it parses and matches `schema`. */
function parseChecked(data: Uint8Array, schema: TSchema): unknown {
  try {
    const value: unknown = JSON.parse(dec.decode(data));
    return check(schema, value) ? value : MALFORMED;
  } catch {
    return MALFORMED;
  }
}

export class Bus {
  private readonly subs: Subscription[] = [];
  private readonly consumers: Array<{ stop(): void; done: Promise<void> }> = [];
  private jsClient?: JetStreamClient;
  private jsmClient?: JetStreamManager;
  private readonly ensured = new Set<string>();
  /** False from a disconnect until the client has reconnected (isClosed() stays false meanwhile). */
  private linked = true;
  /** Disconnects so far: what was broadcast meanwhile may not have arrived (PollHub's queue tails). */
  private linkLosses = 0;
  /** This process among its service's replicas: in its beats and its direct subjects. */
  readonly replicaId: string;
  private readonly liveness = new Liveness();
  private readonly served = new Set<string>();
  private beatTimer?: NodeJS.Timeout;
  /** One inbox subscription for every `request` (replies and acks told apart by token). */
  private mux?: { prefix: string; waiting: Map<string, (m: Msg) => void>; next: number };
  private readonly pending = new Set<PendingAttempt>();
  /** Requests asking for an ack that are still being handled here. */
  private readonly acks = new AckLater();
  private sweepTimer?: NodeJS.Timeout;
  private lastSweep = 0;
  /** RED per subject, once `instrument` gave a registry. */
  private red?: BusMetrics;
  /** Requests being handled that their caller may cancel, by request id (see REQUEST_ID_HEADER). */
  private readonly cancellable = new Map<string, AbortController>();
  private cancelSub?: Subscription;
  /** Durable consumers whose lag /metrics reports (`stream/durable` → names). */
  private readonly watched = new Map<string, { stream: string; durable: string }>();

  private constructor(
    readonly nc: NatsConnection,
    readonly prefix: string,
    private readonly log: Logger,
    private readonly defaultTimeoutMs: number,
    name: string,
  ) {
    this.replicaId = `${name}-${randomUUID().slice(0, 8)}`.replace(/[^A-Za-z0-9_-]/g, '_');
  }

  static async connect(opts: BusOptions): Promise<Bus> {
    const nc = await connect({
      servers: opts.url,
      name: opts.name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      // A half-open connection (the server gone without a FIN, a partition) is noticed after
      // ~10 s instead of the default 4 minutes, and the client reconnects.
      pingInterval: 5_000,
      maxPingOut: 2,
      // Otherwise every request allocates two Error objects up front (their stacks only
      // decorate a failure's message): in the gateway's profile that was ~5 % of its CPU.
      // A failed request is still logged with its subject and cause.
      noAsyncTraces: true,
    });
    if (!coalesceWrites(nc)) opts.log.warn('NATS client internals not as expected: writes are not coalesced');
    const bus = new Bus(nc, opts.prefix, opts.log, opts.defaultTimeoutMs ?? 10_000, opts.name);
    void bus.followStatus();
    bus.hearBeats();
    return bus;
  }

  private async followStatus(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnecting' || s.type === 'staleConnection') {
        if (this.linked) {
          this.log.warn({ status: s.type }, 'NATS connection lost; reconnecting');
          this.linkLosses++;
        }
        this.linked = false;
      } else if (s.type === 'reconnect') {
        this.linked = true;
        this.log.info('NATS connection restored');
      }
    }
  }

  subject(s: string): string {
    return `${this.prefix}.${s}`;
  }

  get js(): JetStreamClient {
    this.jsClient ??= jetstream(this.nc);
    return this.jsClient;
  }

  async jsm(): Promise<JetStreamManager> {
    this.jsmClient ??= await jetstreamManager(this.nc);
    return this.jsmClient;
  }

  /** Serves `c` in the service's queue group; the handler's AppErrors become error replies. */
  serve<C extends RpcContract>(c: C, handler: (req: RequestOf<C>, ctx: HandlerContext) => Promise<ReplyOf<C> | RawJson>): void {
    const subject = this.subject(c.subject);
    const log = this.log.child({ subject });
    const callback = (err: Error | null, msg: Msg) => {
      if (err) {
        log.error({ err }, 'subscription failed');
        return;
      }
      void this.handle(c, msg, handler, log);
    };
    this.subs.push(this.nc.subscribe(subject, { queue: c.service, callback }));
    // Each replica is also reachable by name, so a caller can send to one it knows is alive
    // and avoid one it knows is silent (see `request`).
    this.subs.push(this.nc.subscribe(`${subject}.${this.replicaId}`, { callback }));
    this.served.add(c.service);
    this.hearCancels();
    this.startBeating();
  }

  /** Aborts the handlers of requests whose caller has gone (see REQUEST_ID_HEADER). */
  private hearCancels(): void {
    if (this.cancelSub) return;
    this.cancelSub = this.nc.subscribe(this.subject(CANCEL_SUBJECT), {
      callback: (err, m) => {
        if (!err) this.cancellable.get(dec.decode(m.data))?.abort();
      },
    });
    this.subs.push(this.cancelSub);
  }

  /** Says once a second which services this replica serves (see liveness.ts). */
  private startBeating(): void {
    if (this.beatTimer) return;
    const beat = () => {
      if (this.nc.isClosed()) return;
      const b: Beat = { replica: this.replicaId, services: [...this.served] };
      this.nc.publish(this.subject('bus.alive'), enc.encode(JSON.stringify(b)));
    };
    // After the subscriptions just made are known to the server (a caller hearing the beat
    // may send to this replica by name at once).
    queueMicrotask(() => void this.nc.flush().then(beat, () => undefined));
    this.beatTimer = setInterval(beat, ALIVE_EVERY_MS);
    this.beatTimer.unref();
  }

  private hearBeats(): void {
    this.subs.push(
      this.nc.subscribe(this.subject('bus.alive'), {
        callback: (err, m) => {
          if (err) return;
          try {
            const b = JSON.parse(dec.decode(m.data)) as Beat;
            if (typeof b.replica === 'string' && Array.isArray(b.services)) this.liveness.beat(b);
          } catch {
            /* not a beat */
          }
        },
      }),
    );
  }

  private async handle<C extends RpcContract>(
    c: C,
    msg: Msg,
    handler: (req: RequestOf<C>, ctx: HandlerContext) => Promise<ReplyOf<C> | RawJson>,
    log: Logger,
  ): Promise<void> {
    const deadlineHeader = Number(msg.headers?.get(DEADLINE_HEADER));
    const deadline = Number.isFinite(deadlineHeader) && deadlineHeader > 0 ? deadlineHeader : undefined;
    if (deadline !== undefined && Date.now() >= deadline) {
      log.warn({ late_ms: Date.now() - deadline }, 'request dropped: its caller has stopped waiting');
      return;
    }
    const startBy = Number(msg.headers?.get(START_BY_HEADER));
    if (startBy > 0 && Date.now() > startBy) {
      // Paused or stalled past the time the caller gave: it has asked another replica.
      log.warn({ late_ms: Date.now() - startBy }, 'request dropped: not started in time, its caller has asked another replica');
      return;
    }
    let acked: Msg | undefined;
    if (msg.reply && msg.headers?.get(HOLD_ACK_HEADER)) {
      // Acknowledged at once when the caller's limit is near (it then turns to another replica).
      if (startBy > 0 && startBy - Date.now() < ACK_NOW_WITHIN_MS) sendHoldAck(msg, this.replicaId);
      else this.acks.add((acked = msg), this.replicaId);
    }
    let body: ReplyBody;
    const started = performance.now();
    const requestId = msg.headers?.get(REQUEST_ID_HEADER) || undefined;
    const gone = requestId !== undefined ? new AbortController() : undefined;
    if (requestId !== undefined && gone) this.cancellable.set(requestId, gone);
    try {
      // Named after the contract, not the replica-addressed subject: span names stay few.
      body = await withSpan(`process ${this.subject(c.subject)}`, 'server', { 'messaging.destination.name': msg.subject, 'messaging.operation.type': 'process' }, headersToCarrier(msg.headers), async () => {
        let req: unknown;
        try {
          req = JSON.parse(dec.decode(msg.data));
        } catch {
          req = undefined;
        }
        if (!check(c.request, req)) {
          log.error('request does not match its contract');
          throw new AppError('BAD_REQUEST', 'Malformed internal request', 400);
        }
        const limits: RequestBounds = { ...(deadline !== undefined ? { deadline } : {}), ...(gone ? { signal: gone.signal } : {}) };
        const call = () => handler(req as RequestOf<C>, { subject: msg.subject, log, ...limits });
        const reply = await (deadline !== undefined || gone ? runBounded(limits, call) : call());
        return { ok: reply ?? {} };
      });
    } catch (e) {
      const outage = asOutage(e);
      if (gone?.signal.aborted) {
        // Its statements were cancelled because the caller left: not an outage, and nobody reads it.
        body = { err: toWireError(clientClosedRequest()) };
      } else if (isAppError(e)) {
        body = { err: toWireError(e) };
      } else if (outage) {
        log.warn({ err: e }, 'a dependency is unavailable');
        body = { err: toWireError(outage) };
      } else {
        log.error({ err: e }, 'handler failed');
        body = { err: { code: 'INTERNAL_SERVER_ERROR', msg: 'Internal server error', status: 500, data: {} } };
      }
    }
    if (requestId !== undefined) this.cancellable.delete(requestId);
    if (this.red) {
      const status = 'err' in body ? body.err.status : 200;
      const outcome = status < 400 ? 'ok' : status === 503 ? 'unavailable' : status < 500 ? 'client_error' : 'error';
      this.red.request(c.subject, outcome, (performance.now() - started) / 1000);
    }
    if (acked) this.acks.answered(acked);
    if (!msg.reply) return;
    try {
      const { data, headers } = await encodeReply(body);
      msg.respond(data, headers ? { headers } : undefined);
    } catch (err) {
      // A reply over the server's max_payload must not become an unhandled rejection (a crash
      // of the whole service); the caller gets a 500 at once instead of waiting for its timeout.
      log.error({ err }, 'reply could not be sent');
      msg.respond(enc.encode(JSON.stringify({ err: { code: 'INTERNAL_SERVER_ERROR', msg: 'Internal server error', status: 500, data: {} } })));
    }
  }

  /**
   * Calls `c`; error replies are rethrown as AppError, no responder or a timeout as 503.
   * The request goes to a replica heard beating within the last seconds (the queue group
   * when none is known). With another live replica to turn to, the one asked must say within
   * a second that it took the request (and drops it if it could not start by then), or the
   * request goes to another: a paused replica costs a second, not the whole timeout. If the
   * replica holding the request falls silent (killed, paused), a `safe` request goes to
   * another and any other is answered 503 at once.
   */
  async request<C extends RpcContract>(c: C, req: RequestOf<C>, opts: { timeoutMs?: number } = {}): Promise<ReplyOf<C>> {
    const body = JSON.parse(await this.exchange(c, req, opts)) as ReplyBody;
    if ('err' in body) throw fromWireError(body.err);
    return body.ok as ReplyOf<C>;
  }

  /**
   * `request` whose reply stays JSON text (a large reply relayed on, see raw-json.ts); the
   * reply is not checked against the contract, as `request` does not check it either.
   */
  async requestRaw<C extends RpcContract>(c: C, req: RequestOf<C>, opts: { timeoutMs?: number } = {}): Promise<RawJson> {
    const text = await this.exchange(c, req, opts);
    if (text.startsWith(OK_PREFIX)) return new RawJson(text.slice(OK_PREFIX.length, -1));
    const body = JSON.parse(text) as ReplyBody;
    if ('err' in body) throw fromWireError(body.err);
    return new RawJson(JSON.stringify(body.ok));
  }

  /** Sends a request and returns the reply's text (gunzipped). */
  private async exchange<C extends RpcContract>(c: C, req: RequestOf<C>, opts: { timeoutMs?: number }): Promise<string> {
    const subject = this.subject(c.subject);
    return withSpan(`send ${subject}`, 'client', { 'messaging.destination.name': subject, 'messaging.operation.type': 'send' }, undefined, async () => {
      const data = enc.encode(JSON.stringify(req));
      // Over the server's max_payload NATS refuses to send at all: that is the caller's
      // oversized input, not an unavailable service.
      if (this.nc.info && data.length > this.nc.info.max_payload) throw payloadTooLarge();
      // Never longer than what is left of the request being handled (if any).
      const inherited = currentDeadline();
      const timeout = Math.min(opts.timeoutMs ?? this.defaultTimeoutMs, inherited !== undefined ? inherited - Date.now() : Infinity);
      if (timeout <= 0) throw serviceUnavailable();
      const signal = currentSignal();
      if (signal?.aborted) throw clientClosedRequest();
      const deadline = Date.now() + timeout;
      const avoid = new Set<string>();
      for (;;) {
        const fresh = this.liveness.fresh(c.service, avoid);
        const to = fresh.length === 0 ? undefined : fresh[Math.floor(Math.random() * fresh.length)];
        const outcome = await this.attempt(to === undefined ? subject : `${subject}.${to}`, data, {
          service: c.service,
          deadline,
          ...(fresh.length > 1 ? { ackWithinMs: ACK_WITHIN_MS } : {}),
          ...(to !== undefined ? { holder: to } : {}),
          ...(signal !== undefined ? { signal } : {}),
        });
        if ('msg' in outcome) return dec.decode(await decodeReply(outcome.msg));
        if (outcome.gaveUp === 'aborted') throw clientClosedRequest();
        const gone = outcome.holder ?? to;
        const again =
          Date.now() < deadline &&
          gone !== undefined &&
          (outcome.gaveUp === 'unacknowledged' || outcome.gaveUp === 'no responders' || (outcome.gaveUp === 'holder lost' && isSafe(c, req)));
        this.log.warn({ subject, replica: gone, why: outcome.gaveUp, again }, 'request failed');
        if (!again) throw serviceUnavailable();
        if (outcome.gaveUp === 'no responders') this.liveness.forget(c.service, gone);
        avoid.add(gone);
      }
    });
  }

  /**
   * One try of `request`: published with a reply subject of the shared inbox; settles with the
   * reply, or with why it stopped waiting. With `ackWithinMs` the replica must acknowledge
   * (and not start later than that); with `holder` (or once one acknowledged) its silence ends
   * the wait.
   */
  private attempt(
    subject: string,
    data: Uint8Array,
    { signal, ...o }: { service: string; deadline: number; ackWithinMs?: number; holder?: string; signal?: AbortSignal },
  ): Promise<AttemptOutcome> {
    return new Promise<AttemptOutcome>((resolve) => {
      const mux = this.inbox();
      const token = String(mux.next++);
      const started = Date.now();
      const p: PendingAttempt = { started, acked: false, heldSince: started, ...o, settle: () => undefined };
      const timer = setTimeout(() => p.settle({ gaveUp: 'timeout' }), Math.max(1, o.deadline - started));
      const requestId = signal !== undefined ? `${this.replicaId}.${token}` : undefined;
      const onAbort = () => {
        // Whichever replica took it stops working on it (and on what it asked of others).
        if (requestId !== undefined && !this.nc.isClosed()) this.nc.publish(this.subject(CANCEL_SUBJECT), enc.encode(requestId));
        p.settle({ gaveUp: 'aborted' });
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      p.settle = (out) => {
        if (!mux.waiting.delete(token)) return;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.pending.delete(p);
        resolve(out);
      };
      mux.waiting.set(token, (m) => {
        if (m.data.length === 0 && m.headers?.code === 503) return p.settle({ gaveUp: 'no responders' });
        const by = m.headers?.get(HELD_BY_HEADER);
        if (by) {
          p.acked = true;
          p.holder = by;
          p.heldSince = Date.now();
          return;
        }
        p.settle({ msg: m });
      });
      if (o.ackWithinMs !== undefined || o.holder !== undefined) this.watch(p);
      const extra: Record<string, string> = { [DEADLINE_HEADER]: String(o.deadline) };
      if (requestId !== undefined) extra[REQUEST_ID_HEADER] = requestId;
      if (o.ackWithinMs !== undefined) {
        extra[HOLD_ACK_HEADER] = '1';
        extra[START_BY_HEADER] = String(started + o.ackWithinMs);
      }
      try {
        this.nc.publish(subject, data, { reply: `${mux.prefix}.${token}`, headers: carrierToHeaders(extra) });
      } catch (e) {
        this.log.warn({ err: e, subject }, 'request could not be sent');
        p.settle({ gaveUp: 'timeout' });
      }
    });
  }

  private inbox(): NonNullable<Bus['mux']> {
    if (this.mux) return this.mux;
    const mux = { prefix: createInbox(), waiting: new Map<string, (m: Msg) => void>(), next: 0 };
    this.subs.push(
      this.nc.subscribe(`${mux.prefix}.*`, {
        callback: (err, m) => {
          if (err) return;
          mux.waiting.get(m.subject.slice(mux.prefix.length + 1))?.(m);
        },
      }),
    );
    this.mux = mux;
    return mux;
  }

  /** Checks `p` every SWEEP_EVERY_MS (one timer for every pending request) until it settles. */
  private watch(p: PendingAttempt): void {
    this.pending.add(p);
    this.startSweep();
  }

  /** The one timer checking pending requests, while there are any. */
  private startSweep(): void {
    if (this.sweepTimer) return;
    this.lastSweep = Date.now();
    this.sweepTimer = setInterval(() => {
      const now = Date.now();
      // This process's own event loop was stalled: replies and acks may be waiting unread
      // behind this timer; judge nobody until they had their turn.
      const late = now - this.lastSweep > 2 * SWEEP_EVERY_MS;
      this.lastSweep = now;
      if (!late) {
        for (const q of this.pending) {
          if (!q.acked && q.ackWithinMs !== undefined && now - q.started >= q.ackWithinMs) q.settle({ gaveUp: 'unacknowledged', ...(q.holder !== undefined ? { holder: q.holder } : {}) });
          else if (q.holder !== undefined && !this.liveness.isAlive(q.service, q.holder, q.heldSince)) q.settle({ gaveUp: 'holder lost', holder: q.holder });
        }
      }
      if (this.pending.size === 0) {
        clearInterval(this.sweepTimer);
        this.sweepTimer = undefined;
      }
    }, SWEEP_EVERY_MS);
    this.sweepTimer.unref();
  }

  /** Creates (or updates) the JetStream stream capturing `<prefix>.<service>.<kind>.>`. */
  async ensureStream(service: string, kind: 'evt' | 'inbox' = 'evt'): Promise<string> {
    const name = eventStreamName(this.prefix, service, kind);
    if (this.ensured.has(name)) return name;
    const jsm = await this.jsm();
    const subjects = [`${this.prefix}.${service}.${kind}.>`];
    try {
      await jsm.streams.info(name);
    } catch {
      try {
        await jsm.streams.add({ name, subjects, max_age: 7 * 24 * 3600 * 1e9, duplicate_window: 120 * 1e9 });
      } catch (e) {
        // Another replica created it between our check and our add.
        await jsm.streams.info(name).catch(() => {
          throw e;
        });
      }
    }
    this.ensured.add(name);
    return name;
  }

  /** Publishes raw JSON on a full subject with a message id (used by the outbox relay). */
  /**
   * Prepares raw JSON for `publishEncoded` (used by the outbox relay): large events travel
   * gzipped like large replies; one the server cannot take even so throws EventTooLarge.
   * Encoding is separate from publishing so a batch is encoded first and then sent in order.
   */
  async encodeEvent(payload: string, carrier?: Record<string, string>): Promise<{ data: Uint8Array; headers: MsgHdrs }> {
    const headers = natsHeaders();
    for (const [k, v] of Object.entries(carrier ?? {})) headers.set(k, v);
    const { data, gzipped } = await compressEvent(payload);
    if (gzipped) headers.set(ENCODING_HEADER, 'gzip');
    const limit = (this.nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD) - HEADER_ROOM;
    if (data.length > limit) throw new EventTooLarge(data.length, limit);
    return { data, headers };
  }

  /**
   * Publishes an encoded event on a full subject with a message id (JetStream drops repeats),
   * resolving once JetStream stored it. The acknowledgement comes back to the shared request
   * inbox: the JetStream client's publish costs an Error object (a stack trace) per call even
   * with noAsyncTraces, and the relay makes two publishes per message sent.
   */
  async publishEncoded(subject: string, e: { data: Uint8Array; headers: MsgHdrs }, msgId: string): Promise<void> {
    e.headers.set(MSG_ID_HEADER, msgId);
    const ack = await new Promise<Msg>((resolve, reject) => {
      const mux = this.inbox();
      const token = String(mux.next++);
      const timer = setTimeout(() => {
        if (mux.waiting.delete(token)) reject(new Error(`JetStream did not acknowledge an event on ${subject} within ${JS_PUBLISH_TIMEOUT_MS} ms`));
      }, JS_PUBLISH_TIMEOUT_MS);
      mux.waiting.set(token, (m) => {
        mux.waiting.delete(token);
        clearTimeout(timer);
        resolve(m);
      });
      try {
        this.nc.publish(subject, e.data, { reply: `${mux.prefix}.${token}`, headers: e.headers });
      } catch (err) {
        mux.waiting.delete(token);
        clearTimeout(timer);
        reject(err);
      }
    });
    if (ack.data.length === 0 && ack.headers?.code === 503) throw new Error(`no JetStream stream takes ${subject}`);
    const pubAck = JSON.parse(dec.decode(ack.data)) as { stream?: string; error?: { description?: string } };
    if (pubAck.error) throw new Error(`JetStream refused an event on ${subject}: ${pubAck.error.description ?? 'no reason given'}`);
    if (!pubAck.stream) throw new Error(`JetStream answered an event on ${subject} with no stream`);
  }

  /** Publishes raw JSON on a full subject with a message id. */
  async publishRaw(subject: string, payload: string, msgId: string, carrier?: Record<string, string>): Promise<void> {
    await this.publishEncoded(subject, await this.encodeEvent(payload, carrier), msgId);
  }

  /** Publishes an event directly (outside a transaction); prefer the outbox for state changes. */
  async publish<C extends EventContract>(c: C, payload: PayloadOf<C>, opts: { msgId: string }): Promise<void> {
    await this.ensureStream(c.service, c.subject.split('.')[1] === 'inbox' ? 'inbox' : 'evt');
    await this.js.publish(this.subject(c.subject), enc.encode(JSON.stringify(payload)), {
      msgID: opts.msgId,
      headers: carrierToHeaders(),
    });
  }

  /**
   * Consumes the events of `contracts` (all from one service's stream) with a durable pull
   * consumer, one at a time in stream order. A handler that throws gets the message again
   * later; after `maxDeliver` attempts it is dropped with an error log (dead letter).
   */
  async consume<const Cs extends readonly EventContract[]>(
    contracts: Cs,
    opts: ConsumeOptions,
    handler: (...args: DeliveredArgs<Cs, EventMeta>) => Promise<void>,
  ): Promise<void> {
    const { messages, wanted, log, maxDeliver } = await this.openConsumer(contracts, opts);
    const done = (async () => {
      for await (const m of messages) {
        const contract = wanted.get(m.subject);
        if (contract) await this.deliver(m, contract, handler as (subject: string, payload: unknown, meta: EventMeta) => Promise<void>, log, maxDeliver);
        else m.ack();
      }
    })();
    this.consumers.push({ stop: () => void messages.stop(), done });
  }

  /**
   * Like `consume`, but the handler gets every event that is waiting (up to `opts.batch`) at
   * once, in stream order, so it can apply them in one statement: under load one round trip
   * (and one commit) serves many events, while a lone event still goes at once. The batch is
   * acknowledged when the handler returns; if it throws, the batch's events go again one at a
   * time through `consume`'s rules (retry, then dead letter), so one bad event cannot hold
   * the others back.
   */
  async consumeBatched<const Cs extends readonly EventContract[]>(
    contracts: Cs,
    opts: ConsumeOptions,
    handler: (events: Array<DeliveredArgs<Cs, EventMeta>>) => Promise<void>,
  ): Promise<void> {
    const { messages, wanted, log, maxDeliver } = await this.openConsumer(contracts, opts);
    const one = (subject: string, payload: unknown, meta: EventMeta) => handler([[subject, payload, meta] as DeliveredArgs<Cs, EventMeta>]);
    const buffered: JsMsg[] = [];
    let kick: (() => void) | undefined;
    let ended = false;
    const pump = (async () => {
      try {
        for await (const m of messages) {
          buffered.push(m);
          kick?.();
        }
      } finally {
        ended = true;
        kick?.();
      }
    })();
    const done = (async () => {
      for (;;) {
        if (buffered.length === 0) {
          if (ended) break;
          await new Promise<void>((resolve) => (kick = resolve));
          kick = undefined;
          if (opts.lingerMs && !ended) await new Promise((r) => setTimeout(r, opts.lingerMs));
          continue;
        }
        const batch: Array<{ m: JsMsg; contract: EventContract; payload: unknown }> = [];
        for (const m of buffered.splice(0, opts.batch ?? 256)) {
          const contract = wanted.get(m.subject);
          if (!contract) {
            m.ack();
            continue;
          }
          const payload = parseChecked(await eventBytes(m).catch(() => new Uint8Array()), contract.payload);
          if (payload === MALFORMED) {
            log.error({ seq: m.seq, subject: m.subject }, 'malformed event dropped');
            this.red?.event(contract.subject, 'malformed', 0);
            m.term();
            continue;
          }
          batch.push({ m, contract, payload });
        }
        if (batch.length === 0) continue;
        const started = performance.now();
        try {
          await withSpan(`process ${batch.length} events`, 'consumer', { 'messaging.batch.message_count': batch.length }, undefined, () =>
            handler(batch.map(({ m, payload }) => [m.subject.slice(this.prefix.length + 1), payload, metaOf(m)] as DeliveredArgs<Cs, EventMeta>)),
          );
          for (const { m } of batch) m.ack();
          // Each event of a batch took the batch's time to be handled.
          const seconds = (performance.now() - started) / 1000;
          for (const { contract } of batch) this.red?.event(contract.subject, 'ok', seconds);
        } catch (err) {
          log.warn({ err, events: batch.length }, 'batch handler failed; applying its events one at a time');
          for (const { m, contract } of batch) await this.deliver(m, contract, one, log, maxDeliver);
        }
      }
      await pump.catch(() => undefined);
    })();
    this.consumers.push({ stop: () => void messages.stop(), done });
  }

  /** Creates or updates the durable consumer of `contracts` and starts pulling from it. */
  private async openConsumer(contracts: readonly EventContract[], opts: ConsumeOptions) {
    const service = contracts[0]?.service;
    if (!service) throw new Error('consume needs at least one contract');
    const kind = contracts[0]?.subject.split('.')[1] === 'inbox' ? 'inbox' : 'evt';
    const stream = await this.ensureStream(service, kind);
    const jsm = await this.jsm();
    const durable = `${opts.durable}`.replace(/[^A-Za-z0-9_-]/g, '_');
    // One filter subject, not `filter_subjects`: nats-server before 2.10 has no multi-filter
    // consumers. Several contracts share the stream's wildcard and the rest is skipped here.
    const wanted = new Map<string, EventContract>(contracts.map((c) => [this.subject(c.subject), c]));
    const filter_subject = wanted.size === 1 ? [...wanted.keys()][0] : `${this.prefix}.${service}.${kind}.>`;
    const maxDeliver = opts.maxDeliver ?? 20;
    try {
      const info = await jsm.consumers.info(stream, durable);
      if (info.config.filter_subject !== filter_subject) await jsm.consumers.update(stream, durable, { filter_subject });
    } catch {
      await jsm.consumers
        .add(stream, {
          durable_name: durable,
          ack_policy: AckPolicy.Explicit,
          deliver_policy: opts.deliverNew ? DeliverPolicy.New : DeliverPolicy.All,
          filter_subject,
          max_deliver: maxDeliver,
          ack_wait: 30 * 1e9,
        })
        .catch(async (e) => {
          await jsm.consumers.info(stream, durable).catch(() => {
            throw e;
          });
        });
    }
    const consumer = await this.js.consumers.get(stream, durable);
    const messages = await consumer.consume({ max_messages: opts.batch ?? 256 });
    this.watchConsumer(stream, durable);
    return { messages, wanted, maxDeliver, log: this.log.child({ stream, durable }) };
  }

  private async deliver(
    m: JsMsg,
    contract: EventContract,
    handler: (subject: string, payload: unknown, meta: EventMeta) => Promise<void>,
    log: Logger,
    maxDeliver: number,
  ): Promise<void> {
    const payload = parseChecked(await eventBytes(m).catch(() => new Uint8Array()), contract.payload);
    if (payload === MALFORMED) {
      // Handlers rely on the contract's type; an event that breaks it is its producer's bug.
      log.error({ seq: m.seq, subject: m.subject }, 'malformed event dropped');
      this.red?.event(contract.subject, 'malformed', 0);
      m.term();
      return;
    }
    const started = performance.now();
    const observe = (outcome: EventOutcome) => this.red?.event(contract.subject, outcome, (performance.now() - started) / 1000);
    try {
      await withSpan(`process ${m.subject}`, 'consumer', { 'messaging.destination.name': m.subject, 'messaging.nats.delivery_count': m.info.deliveryCount }, headersToCarrier(m.headers), () =>
        handler(m.subject.slice(this.prefix.length + 1), payload, metaOf(m)),
      );
      m.ack();
      observe('ok');
    } catch (err) {
      if (m.info.deliveryCount >= maxDeliver) {
        log.error({ err, seq: m.seq }, 'event dead-lettered after repeated failures');
        observe('dead_letter');
        m.term();
      } else {
        log.warn({ err, seq: m.seq }, 'event handler failed; will retry');
        observe('retry');
        m.nak(Math.min(30_000, 100 * 2 ** m.info.deliveryCount));
      }
    }
  }

  /** Publishes a broadcast to every replica listening (core NATS: at most once, never stored). */
  broadcast<C extends BroadcastContract>(c: C, payload: PayloadOf<C>): void {
    if (this.isConnected) this.nc.publish(this.subject(c.subject), enc.encode(JSON.stringify(payload)));
  }

  /**
   * Hears `contracts` in this replica (a plain subscription, not a queue group: every replica
   * gets every message). For in-memory state each replica keeps; at most once, so such state
   * needs its own repair (a TTL reload). Payloads that break their contract are dropped.
   * Returns a function that stops listening.
   */
  listen<const Cs extends ReadonlyArray<EventContract | BroadcastContract>>(contracts: Cs, handler: (...args: DeliveredArgs<Cs, ListenMeta>) => void): () => void {
    const deliver = handler as (subject: string, payload: unknown, meta: ListenMeta) => void;
    const subs = contracts.map((c) =>
      this.nc.subscribe(this.subject(c.subject), {
        callback: (err, msg) => {
          if (err) return;
          const handle = (data: Uint8Array) => {
            const payload = parseChecked(data, c.payload);
            if (payload === MALFORMED) {
              this.log.warn({ subject: msg.subject }, 'malformed broadcast dropped');
              return;
            }
            try {
              const msgId = msg.headers?.get('Nats-Msg-Id');
              deliver(c.subject, payload, msgId ? { msgId } : {});
            } catch (e) {
              this.log.warn({ err: e, subject: msg.subject }, 'broadcast handler failed');
            }
          };
          // Events the relay gzipped (large ones) are unpacked off the event loop first.
          if (isCompressedEvent(msg)) void eventBytes(msg).then(handle, () => this.log.warn({ subject: msg.subject }, 'undecodable broadcast dropped'));
          else handle(msg.data);
        },
      }),
    );
    this.subs.push(...subs);
    return () => {
      for (const sub of subs) sub.unsubscribe();
    };
  }

  /**
   * Records RED per subject for what this process serves and consumes, and reports the lag of
   * its durable consumers (`watchConsumer`), in `registry`.
   */
  instrument(registry: Registry): void {
    this.red = busMetrics(registry);
    const watched = this.watched;
    const jsm = () => this.jsm();
    // One consumer-info round trip per watched consumer, at scrape time, shared by the gauges.
    const read = sharedRead(async () => {
      const m = await jsm().catch(() => undefined);
      if (!m) return [];
      const infos = await Promise.all([...watched.values()].map(({ stream, durable }) => m.consumers.info(stream, durable).catch(() => undefined)));
      return infos.filter((i) => i !== undefined);
    });
    const gauge = (name: string, help: string, value: (i: ConsumerInfo) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['stream', 'consumer'],
        registers: [registry],
        async collect() {
          // Consumers no longer watched (a former events leader's) drop out of the output.
          this.reset();
          for (const i of await read()) this.set({ stream: i.stream_name, consumer: i.name }, value(i));
        },
      });
    gauge('zc_jetstream_consumer_pending_messages', 'Messages of the stream this durable consumer has not received yet (its lag)', (i) => i.num_pending);
    gauge('zc_jetstream_consumer_ack_pending_messages', 'Messages delivered to this consumer and not yet acknowledged', (i) => i.num_ack_pending);
    gauge('zc_jetstream_consumer_redelivered_messages', 'Unacknowledged messages delivered more than once', (i) => i.num_redelivered);
  }

  /** Reports the lag of `durable` on `stream` in /metrics until the returned function is called. */
  watchConsumer(stream: string, durable: string): () => void {
    const key = `${stream}/${durable}`;
    this.watched.set(key, { stream, durable });
    return () => void this.watched.delete(key);
  }

  /** Not closed for good (while reconnecting the client buffers publishes and this stays true). */
  get isConnected(): boolean {
    return !this.nc.isClosed();
  }

  /** Connected right now: not closed and not between a disconnect and the reconnect (/readyz). */
  get isOnline(): boolean {
    return this.linked && !this.nc.isClosed();
  }

  /** How many times the connection was lost; unchanged and online means nothing heard may have been missed since. */
  get losses(): number {
    return this.linkLosses;
  }

  /** Stops serving and consuming, lets in-flight work finish, then closes the connection. */
  async close(): Promise<void> {
    clearInterval(this.beatTimer);
    for (const c of this.consumers) c.stop();
    await Promise.allSettled(this.consumers.map((c) => c.done));
    if (!this.nc.isClosed()) await this.nc.drain().catch(() => this.nc.close());
  }
}
