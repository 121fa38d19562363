/**
 * Fixtures for the messages e2e tests: streams and subscriptions made through the real
 * subscriptions endpoints (each waits until the messages service's read model has them), and
 * the client events the messages service wrote.
 */
import { randomUUID } from 'node:crypto';
import { eventStreamName } from '@zc/shared/bus';
import { createPool, type Pool } from '@zc/shared/db';
import { eventsInbox, subscriptionsEvents, type StreamRecord } from '@zc/shared/contracts';
import type { Account, System } from '../harness.js';

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
  readonly streams = new Map<string, StreamRecord>();
  private readonly creators = new Map<string, Account>();
  private readonly accounts = new Map<number, Account>();
  private readonly db: Pool;

  constructor(readonly sys: System) {
    this.db = createPool(sys.env.databaseUrl, { max: 2 });
    this.remember(...Object.values(sys.people));
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

  /** The account of a user id among the system's people or those passed to `remember`. */
  private accountOf(userId: number): Account {
    const a = this.accounts.get(userId);
    if (!a) throw new Error(`no account known for user ${userId}; pass it to world.remember()`);
    return a;
  }

  /** Makes an account created by the test usable as an actor of the fixtures. */
  remember(...accounts: Account[]): void {
    for (const a of accounts) this.accounts.set(a.user_id, a);
  }

  private async ok(r: Promise<{ status: number; body: unknown }>, what: string): Promise<void> {
    const res = await r;
    if (res.status !== 200) throw new Error(`${what} failed: ${res.status} ${JSON.stringify(res.body)}`);
  }

  /** Creates the stream through POST /users/me/subscriptions, by its first subscriber. */
  async createStream(name: string, subscribers: number[], o: StreamOptions = {}): Promise<StreamRecord> {
    const creator = this.accountOf(subscribers[0] as number);
    await this.ok(
      this.sys.client(creator).post('/users/me/subscriptions', {
        subscriptions: [{ name }],
        principals: subscribers,
        invite_only: o.invite_only ?? false,
        ...(o.history_public_to_subscribers === undefined ? {} : { history_public_to_subscribers: o.history_public_to_subscribers }),
        stream_post_policy: o.stream_post_policy ?? 1,
      }),
      `creating ${name}`,
    );
    const { rows } = await this.db.query<{ id: number; date_created: Date; creator_id: number | null; history_public_to_subscribers: boolean }>(
      'SELECT id, date_created, creator_id, history_public_to_subscribers FROM subscriptions.stream WHERE realm_id = $1 AND lower(name) = lower($2)',
      [this.sys.realmId, name],
    );
    const row = rows[0];
    if (!row) throw new Error(`stream ${name} was not created`);
    const stream: StreamRecord = {
      stream_id: row.id,
      realm_id: this.sys.realmId,
      name,
      description: '',
      rendered_description: '',
      invite_only: o.invite_only ?? false,
      is_web_public: false,
      history_public_to_subscribers: row.history_public_to_subscribers,
      stream_post_policy: o.stream_post_policy ?? 1,
      message_retention_days: null,
      date_created: Math.floor(row.date_created.getTime() / 1000),
      creator_id: row.creator_id,
      can_remove_subscribers_group_id: this.sys.realmId * 8 + 5,
      is_archived: false,
    };
    this.streams.set(name, stream);
    this.creators.set(name, creator);
    await this.until('SELECT 1 FROM messages.subscriber WHERE stream_id = $1 AND user_id = $2', [stream.stream_id, subscribers[subscribers.length - 1]]);
    return stream;
  }

  /**
   * Changes stream settings as the subscriptions service would announce them. There is no
   * stream-settings endpoint yet (PATCH /streams/{id}), so this publishes its domain event.
   */
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

  /** Subscribes users, invited by the stream's creator (who may, also to a private stream). */
  async subscribe(name: string, userIds: number[]): Promise<void> {
    const creator = this.creators.get(name) as Account;
    await this.ok(this.sys.client(creator).post('/users/me/subscriptions', { subscriptions: [{ name }], principals: userIds }), `subscribing to ${name}`);
    await this.until('SELECT 1 FROM messages.subscriber WHERE stream_id = $1 AND user_id = $2', [this.id(name), userIds[userIds.length - 1]]);
  }

  /** Each user leaves the stream themselves. */
  async unsubscribe(name: string, userIds: number[]): Promise<void> {
    for (const id of userIds) {
      await this.ok(this.sys.client(this.accountOf(id)).delete('/users/me/subscriptions', { subscriptions: [name] }), `leaving ${name}`);
    }
    await this.until('SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM messages.subscriber WHERE stream_id = $1 AND user_id = ANY($2::bigint[]))', [this.id(name), userIds]);
  }

  async setMuted(name: string, userId: number, muted: boolean): Promise<void> {
    const stream_id = this.id(name);
    await this.ok(
      this.sys.client(this.accountOf(userId)).post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id, property: 'is_muted', value: muted }] }),
      `muting ${name}`,
    );
    await this.until('SELECT 1 FROM messages.subscriber WHERE stream_id = $1 AND user_id = $2 AND is_muted = $3', [stream_id, userId, muted]);
  }

  async setTopicMuted(name: string, userId: number, topic: string, muted: boolean): Promise<void> {
    const stream_id = this.id(name);
    await this.ok(
      this.sys.client(this.accountOf(userId)).patch('/users/me/subscriptions/muted_topics', { stream_id, topic, op: muted ? 'add' : 'remove' }),
      `muting topic ${topic}`,
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
