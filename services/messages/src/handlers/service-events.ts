/**
 * A durable, in-order consumer of another service's domain events.
 *
 * Why not `bus.consume`: it filters with `filter_subjects`, which needs NATS server 2.10,
 * and the server on our machines is 2.9 (it refuses the consumer, so the service would not
 * start). This consumer filters with one wildcard subject (`<prefix>.<service>.evt.>`,
 * supported by 2.9) and skips the subjects it was not asked for in-process, which keeps the
 * stream order across subjects. TODO(issue-3): switch back to `bus.consume` once it falls
 * back to a single filter on 2.9 servers.
 */
import { AckPolicy, DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import type { Bus, EventContract, EventMeta } from '@zc/shared/bus';
import type { Logger } from '@zc/shared/logging';

const MAX_DELIVER = 20;

export interface ServiceEventsConsumer {
  stop(): Promise<void>;
}

export async function consumeServiceEvents(
  bus: Bus,
  log: Logger,
  contracts: readonly EventContract[],
  durableName: string,
  handler: (subject: string, payload: unknown, meta: EventMeta) => Promise<void>,
): Promise<ServiceEventsConsumer> {
  const service = contracts[0]?.service as string;
  const stream = await bus.ensureStream(service, 'evt');
  const jsm = await bus.jsm();
  const durable = durableName.replace(/[^A-Za-z0-9_-]/g, '_');
  const wanted = new Set(contracts.map((c) => bus.subject(c.subject)));
  try {
    await jsm.consumers.info(stream, durable);
  } catch {
    await jsm.consumers
      .add(stream, {
        durable_name: durable,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        filter_subject: bus.subject(`${service}.evt.>`),
        max_deliver: MAX_DELIVER,
        ack_wait: 30 * 1e9,
      })
      // Another replica created it at the same moment.
      .catch(async (e) => jsm.consumers.info(stream, durable).catch(() => Promise.reject(e)));
  }
  const consumer = await bus.js.consumers.get(stream, durable);
  const messages = await consumer.consume({ max_messages: 256 });
  const clog = log.child({ stream, durable });

  async function deliver(m: JsMsg): Promise<void> {
    if (!wanted.has(m.subject)) {
      m.ack();
      return;
    }
    let payload: unknown;
    try {
      payload = m.json();
    } catch {
      clog.error({ seq: m.seq }, 'malformed event dropped');
      m.term();
      return;
    }
    try {
      await handler(m.subject.slice(bus.prefix.length + 1), payload, {
        seq: m.seq,
        redelivered: m.redelivered,
        origin: m.headers?.get('Zc-Origin') || undefined,
        txid: m.headers?.get('Zc-Txid') ? Number(m.headers.get('Zc-Txid')) : undefined,
      });
      m.ack();
    } catch (err) {
      if (m.info.deliveryCount >= MAX_DELIVER) {
        clog.error({ err, seq: m.seq }, 'event dead-lettered after repeated failures');
        m.term();
      } else {
        clog.warn({ err, seq: m.seq }, 'event handler failed; will retry');
        m.nak(Math.min(30_000, 100 * 2 ** m.info.deliveryCount));
      }
    }
  }

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
