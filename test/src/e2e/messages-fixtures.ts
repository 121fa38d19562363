/**
 * Fixtures for the messages e2e tests: streams and subscriptions, and the client events the
 * messages service wrote.
 *
 * Streams are driven by publishing the subscriptions service's domain events on the bus
 * (what that service publishes through its outbox), because the subscriptions service does
 * not start on our NATS 2.9 server yet (its consumers use `filter_subjects`, a 2.10 feature).
 * TODO(issue-3): switch to POST /users/me/subscriptions once it runs here.
 */
import { randomUUID } from 'node:crypto';
import { eventStreamName } from '@zc/shared/bus';
import { createPool, type Pool } from '@zc/shared/db';
import { eventsInbox, subscriptionsEvents, type StreamRecord } from '@zc/shared/contracts';
import type { System } from '../harness.js';

/**
 * A response or event body as the tests read it: JSON indexed freely (the assertions, not the
 * type, check the shape).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
export type Msg = Record<string, any>;

export interface StreamOptions {
  invite_only?: boolean;
  history_public_to_subscribers?: boolean;
  stream_post_policy?: number;
  is_archived?: boolean;
}

export class MessagesWorld {
  private nextStreamId = 100;
  readonly streams = new Map<string, StreamRecord>();
  private readonly db: Pool;

  constructor(readonly sys: System) {
    this.db = createPool(sys.env.databaseUrl, { max: 2 });
  }

  private get bus() {
    return (this.sys.services.get('messages') ?? this.sys.services.get('users'))![0]!.ctx.bus;
  }

  /** Waits until the messages service's read model satisfies `sql` (returns a row). */
  async until(sql: string, params: unknown[]): Promise<void> {
    for (let i = 0; i < 200; i++) {
      const { rowCount } = await this.db.query(sql, params);
      if (rowCount) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`read model never satisfied: ${sql} ${JSON.stringify(params)}`);
  }

  async createStream(name: string, subscribers: number[], o: StreamOptions = {}): Promise<StreamRecord> {
    const stream: StreamRecord = {
      stream_id: this.nextStreamId++,
      realm_id: this.sys.realmId,
      name,
      description: '',
      rendered_description: '',
      invite_only: o.invite_only ?? false,
      is_web_public: false,
      history_public_to_subscribers: o.history_public_to_subscribers ?? !(o.invite_only ?? false),
      stream_post_policy: o.stream_post_policy ?? 1,
      message_retention_days: null,
      date_created: Math.floor(Date.now() / 1000),
      creator_id: null,
      can_remove_subscribers_group_id: 1,
      is_archived: o.is_archived ?? false,
    };
    this.streams.set(name, stream);
    await this.bus.publish(subscriptionsEvents.streamCreated, stream, { msgId: randomUUID() });
    await this.until('SELECT 1 FROM messages.stream WHERE id = $1', [stream.stream_id]);
    if (subscribers.length) await this.subscribe(name, subscribers);
    return stream;
  }

  async updateStream(name: string, change: Partial<StreamRecord>): Promise<void> {
    const s = { ...(this.streams.get(name) as StreamRecord), ...change };
    this.streams.set(name, s);
    await this.bus.publish(subscriptionsEvents.streamUpdated, s, { msgId: randomUUID() });
    await this.until('SELECT 1 FROM messages.stream WHERE id = $1 AND invite_only = $2 AND history_public_to_subscribers = $3 AND stream_post_policy = $4', [
      s.stream_id,
      s.invite_only,
      s.history_public_to_subscribers,
      s.stream_post_policy,
    ]);
  }

  id(name: string): number {
    return (this.streams.get(name) as StreamRecord).stream_id;
  }

  async subscribe(name: string, userIds: number[]): Promise<void> {
    const stream_id = this.id(name);
    await this.bus.publish(subscriptionsEvents.subscribersAdded, { realm_id: this.sys.realmId, stream_id, user_ids: userIds }, { msgId: randomUUID() });
    await this.until('SELECT 1 FROM messages.subscriber WHERE stream_id = $1 AND user_id = $2', [stream_id, userIds[userIds.length - 1]]);
  }

  async unsubscribe(name: string, userIds: number[]): Promise<void> {
    const stream_id = this.id(name);
    await this.bus.publish(subscriptionsEvents.subscribersRemoved, { realm_id: this.sys.realmId, stream_id, user_ids: userIds }, { msgId: randomUUID() });
    await this.until('SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM messages.subscriber WHERE stream_id = $1 AND user_id = ANY($2::bigint[]))', [stream_id, userIds]);
  }

  async setMuted(name: string, userId: number, muted: boolean): Promise<void> {
    const stream_id = this.id(name);
    await this.bus.publish(
      subscriptionsEvents.subscriptionUpdated,
      { realm_id: this.sys.realmId, stream_id, user_id: userId, property: 'is_muted', value: muted },
      { msgId: randomUUID() },
    );
    await this.until('SELECT 1 FROM messages.subscriber WHERE stream_id = $1 AND user_id = $2 AND is_muted = $3', [stream_id, userId, muted]);
  }

  async setTopicMuted(name: string, userId: number, topic: string, muted: boolean): Promise<void> {
    const stream_id = this.id(name);
    await this.bus.publish(
      subscriptionsEvents.userTopicChanged,
      { realm_id: this.sys.realmId, user_id: userId, stream_id, topic_name: topic, visibility_policy: muted ? 1 : 0, last_updated: 0 },
      { msgId: randomUUID() },
    );
    await this.until(
      muted
        ? 'SELECT 1 FROM messages.user_topic WHERE user_id = $1 AND stream_id = $2 AND topic_key = lower($3)'
        : 'SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM messages.user_topic WHERE user_id = $1 AND stream_id = $2 AND topic_key = lower($3))',
      [userId, stream_id, topic],
    );
  }

  /** Every client notify the messages service has relayed so far, oldest first. */
  async notifications(): Promise<Msg[]> {
    await this.sys.flushOutboxes();
    const bus = this.bus;
    const jsm = await bus.jsm();
    const name = eventStreamName(bus.prefix, 'events', 'inbox');
    const info = await jsm.streams.info(name).catch(() => undefined);
    if (!info) return [];
    const out: Msg[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
      const m = await jsm.streams.getMessage(name, { seq }).catch(() => undefined);
      if (!m || m.subject !== bus.subject(eventsInbox.notify.subject)) continue;
      if (m.header?.get('Zc-Origin') !== 'messages') continue;
      out.push(m.json());
    }
    return out;
  }

  async close(): Promise<void> {
    await this.db.end();
  }
}

/** A world on a system with the services the messages tests need. */
export function messagesWorld(sys: System, t: { teardown(fn: () => unknown): void }): MessagesWorld {
  const w = new MessagesWorld(sys);
  t.teardown(() => w.close());
  return w;
}
