import type { Static, TSchema } from '@sinclair/typebox';

/** A request/reply method served by one service (`<prefix>.<service>.v<N>.<method>`). */
export interface RpcContract<Q extends TSchema = TSchema, R extends TSchema = TSchema> {
  readonly kind: 'rpc';
  readonly service: string;
  /** Subject without the configurable prefix. */
  readonly subject: string;
  readonly request: Q;
  readonly reply: R;
}

/** A fact published through JetStream (`<prefix>.<service>.evt.v<N>.<entity>.<verb>`) or a durable inbox command. */
export interface EventContract<E extends TSchema = TSchema> {
  readonly kind: 'event';
  readonly service: string;
  readonly subject: string;
  readonly payload: E;
}

export type RequestOf<C> = C extends RpcContract<infer Q, TSchema> ? Static<Q> : never;
export type ReplyOf<C> = C extends RpcContract<TSchema, infer R> ? Static<R> : never;
export type PayloadOf<C> = C extends EventContract<infer E> ? Static<E> : never;

/** Declares a request/reply method; the service is the subject's first token. */
export function rpc<Q extends TSchema, R extends TSchema>(subject: string, s: { request: Q; reply: R }): RpcContract<Q, R> {
  return { kind: 'rpc', service: subject.split('.')[0] as string, subject, request: s.request, reply: s.reply };
}

/** Declares a JetStream-carried event; the service is the subject's first token. */
export function event<E extends TSchema>(subject: string, payload: E): EventContract<E> {
  return { kind: 'event', service: subject.split('.')[0] as string, subject, payload };
}

/** JetStream stream name for a service's domain events: `<PREFIX>_<SERVICE>_EVT`. */
export function eventStreamName(prefix: string, service: string, kind: 'evt' | 'inbox' = 'evt'): string {
  return `${prefix}_${service}_${kind}`.toUpperCase();
}
