import type { Static, TSchema } from '@sinclair/typebox';

/** A request/reply method served by one service (`<prefix>.<service>.v<N>.<method>`). */
export interface RpcContract<Q extends TSchema = TSchema, R extends TSchema = TSchema> {
  readonly kind: 'rpc';
  readonly service: string;
  /** Subject without the configurable prefix. */
  readonly subject: string;
  readonly request: Q;
  readonly reply: R;
  /**
   * Whether a request may be sent again after the replica that took it died or stalled
   * mid-way (it may have done the work): reads, and writes made idempotent by a key. Others
   * are answered 503 then (a request no replica took is always sent again: see `Bus.request`).
   */
  readonly safe?: boolean | SafeCheck<Static<Q>>;
}

/** A predicate on the request (method syntax: checked bivariantly, so any contract fits RpcContract). */
type SafeCheck<T> = { check(req: T): boolean }['check'];

/** A fact published through JetStream (`<prefix>.<service>.evt.v<N>.<entity>.<verb>`) or a durable inbox command. */
export interface EventContract<E extends TSchema = TSchema, S extends string = string> {
  readonly kind: 'event';
  readonly service: string;
  readonly subject: S;
  readonly payload: E;
}

/**
 * A message every replica of every listening service hears once (core NATS, at most once, not
 * stored): cache invalidations and wake-ups. Domain events (EventContract) can be heard this
 * way too, besides their durable consumers.
 */
export interface BroadcastContract<E extends TSchema = TSchema, S extends string = string> {
  readonly kind: 'broadcast';
  readonly service: string;
  readonly subject: S;
  readonly payload: E;
}

export type RequestOf<C> = C extends RpcContract<infer Q, TSchema> ? Static<Q> : never;
export type ReplyOf<C> = C extends RpcContract<TSchema, infer R> ? Static<R> : never;
export type PayloadOf<C> = C extends EventContract<infer E> | BroadcastContract<infer E> ? Static<E> : never;

/**
 * The arguments a handler of several contracts receives: `(subject, payload, meta)` where the
 * payload's type follows the subject, so `switch (subject)` narrows it without casts.
 */
export type DeliveredArgs<Cs extends ReadonlyArray<EventContract | BroadcastContract>, M> = ArgsOf<Cs[number], M>;
/** Distributes over a union of contracts: one `[subject, payload, meta]` tuple each. */
type ArgsOf<C, M> = C extends EventContract<infer E, infer S> | BroadcastContract<infer E, infer S> ? [subject: S, payload: Static<E>, meta: M] : never;

/** Declares a request/reply method; the service is the subject's first token. */
export function rpc<Q extends TSchema, R extends TSchema>(subject: string, s: { request: Q; reply: R; safe?: boolean | ((req: Static<Q>) => boolean) }): RpcContract<Q, R> {
  return { kind: 'rpc', service: subject.split('.')[0] as string, subject, request: s.request, reply: s.reply, ...(s.safe !== undefined ? { safe: s.safe } : {}) };
}

/** Declares a JetStream-carried event; the service is the subject's first token. */
export function event<E extends TSchema, S extends string>(subject: S, payload: E): EventContract<E, S> {
  return { kind: 'event', service: subject.split('.')[0] as string, subject, payload };
}

/** JetStream stream name for a service's domain events: `<PREFIX>_<SERVICE>_EVT`. */
export function eventStreamName(prefix: string, service: string, kind: 'evt' | 'inbox' = 'evt'): string {
  return `${prefix}_${service}_${kind}`.toUpperCase();
}

/** Declares a core-NATS broadcast heard by every replica; the service is the subject's first token. */
export function broadcast<E extends TSchema, S extends string>(subject: S, payload: E): BroadcastContract<E, S> {
  return { kind: 'broadcast', service: subject.split('.')[0] as string, subject, payload };
}
