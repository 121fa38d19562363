/**
 * A durable JetStream consumer of one service's domain events that works on NATS 2.9.
 *
 * Why not `bus.consume`: it always sets `filter_subjects` (plural), which needs NATS 2.10,
 * and the machines run Debian's nats-server 2.9.10, where the client refuses it. Here the
 * consumer takes the producer's whole event stream with one wildcard `filter_subject` and
 * hands the handler only the subjects asked for. Delivery is the bus's: in stream order, one
 * at a time, acknowledged after the handler succeeds, retried with backoff, dropped with an
 * error log after `maxDeliver` attempts. TODO(issue-3): use bus.consume once it falls back
 * to `filter_subject`.
 */
import { AckPolicy, DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import type { Bus, EventContract } from '@zc/shared/bus';
import type { Logger } from '@zc/shared/logging';

export interface ConsumerHandle {
  stop(): Promise<void>;
}

export async function consumeDomainEvents(
  bus: Bus,
  log: Logger,
  contracts: readonly EventContract[],
  opts: { durable: string; maxDeliver?: number },
  handler: (subject: string, payload: unknown) => Promise<void>,
): Promise<ConsumerHandle> {
  const service = contracts[0]?.service;
  if (!service || contracts.some((c) => c.service !== service)) throw new Error('consumeDomainEvents needs contracts of one service');
  const wanted = new Set(contracts.map((c) => bus.subject(c.subject)));
  const stream = await bus.ensureStream(service);
  const jsm = await bus.jsm();
  const maxDeliver = opts.maxDeliver ?? 20;
  const config = {
    durable_name: opts.durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    filter_subject: bus.subject(`${service}.evt.>`),
    max_deliver: maxDeliver,
    ack_wait: 30 * 1e9,
  };
  // Replicas starting together race to create it; the loser finds it there.
  await jsm.consumers.add(stream, config).catch(async (e) => {
    await jsm.consumers.info(stream, opts.durable).catch(() => {
      throw e;
    });
  });
  const consumer = await bus.js.consumers.get(stream, opts.durable);
  const messages = await consumer.consume({ max_messages: 256 });
  const clog = log.child({ stream, durable: opts.durable });

  const deliver = async (m: JsMsg) => {
    if (!wanted.has(m.subject)) return m.ack();
    let payload: unknown;
    try {
      payload = m.json();
    } catch {
      clog.error({ seq: m.seq }, 'malformed event dropped');
      return m.term();
    }
    try {
      await handler(m.subject.slice(bus.prefix.length + 1), payload);
      m.ack();
    } catch (err) {
      if (m.info.deliveryCount >= maxDeliver) {
        clog.error({ err, seq: m.seq }, 'event dead-lettered after repeated failures');
        m.term();
      } else {
        clog.warn({ err, seq: m.seq }, 'event handler failed; will retry');
        m.nak(Math.min(30_000, 100 * 2 ** m.info.deliveryCount));
      }
    }
  };
  const done = (async () => {
    for await (const m of messages) await deliver(m);
  })();
  return {
    async stop() {
      await messages.close().catch(() => undefined);
      await done.catch(() => undefined);
    },
  };
}
