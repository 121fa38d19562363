/**
 * Reads what the subscriptions service wrote to its outbox, after the relay published it:
 * client events (events.inbox.v1.notify) and domain events (subscriptions.evt.v1.*), straight
 * from JetStream in order, so tests can check payloads and recipients without an event queue.
 */
import { Bus, eventStreamName } from '@zc/shared/bus';
import { createLogger } from '@zc/shared/logging';
import type { System } from '../harness.js';

export interface Relayed {
  subject: string;
  payload: Record<string, unknown>;
}

export interface OutboxReader {
  /** Everything the subscriptions service relayed since the previous call, oldest first. */
  next(): Promise<{ notify: Array<{ users: unknown[]; event: Record<string, unknown> }>; domain: Relayed[] }>;
}

export async function subscriptionsOutbox(sys: System, t: { teardown(fn: () => unknown): void }): Promise<OutboxReader> {
  const bus = await Bus.connect({ url: sys.env.infra.natsUrl, prefix: sys.env.prefix, name: 'subscriptions-outbox-reader', log: createLogger({ service: 'test', level: 'silent' }) });
  t.teardown(() => bus.close());
  const jsm = await bus.jsm();
  const streams = [eventStreamName(sys.env.prefix, 'events', 'inbox'), eventStreamName(sys.env.prefix, 'subscriptions')];
  const seen = new Map<string, number>();
  const read = async (stream: string): Promise<Relayed[]> => {
    const last = await jsm.streams.info(stream).then((i) => i.state.last_seq, () => 0);
    const out: Relayed[] = [];
    for (let seq = (seen.get(stream) ?? 0) + 1; seq <= last; seq++) {
      const m = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
      if (!m || m.header?.get('Zc-Origin') !== 'subscriptions') continue;
      out.push({ subject: m.subject.slice(sys.env.prefix.length + 1), payload: m.json<Record<string, unknown>>() });
    }
    seen.set(stream, last);
    return out;
  };
  // Start after whatever setup produced.
  for (const s of streams) await read(s);
  return {
    async next() {
      await sys.flushOutboxes();
      const notify = (await read(streams[0] as string)).map((r) => r.payload as { users: unknown[]; event: Record<string, unknown> });
      const domain = await read(streams[1] as string);
      return { notify, domain };
    },
  };
}
