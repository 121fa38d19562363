/**
 * The service's bus handlers and consumers over real NATS, started as in production
 * (startService: migrations, queue group, outbox relay, durable consumers): replies, error
 * replies as they cross the wire, malformed requests, streamAccess, and the read model
 * following users.evt events.
 */
import t from 'tap';
import { Bus } from '@zc/shared/bus';
import { messagesEvents, subscriptionsRpc, usersEvents } from '@zc/shared/contracts';
import { createLogger } from '@zc/shared/logging';
import { startService } from '@zc/shared/service';
import { subscriptionsService } from '../../src/service.js';
import { REALM_ID, personRecord, subscriptionsTestDb } from '../helpers.js';

const until = async (check: () => Promise<boolean>) => {
  for (let i = 0; i < 100; i++) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
};

t.test('subscriptions handlers over NATS', async (t) => {
  const db = await subscriptionsTestDb(t);
  const log = createLogger({ service: 'subscriptions-test', level: 'silent' });
  const running = await startService(subscriptionsService, { config: db.env.config, log, admin: false });
  t.teardown(() => running.stop());
  const bus = await Bus.connect({ url: db.env.infra.natsUrl, prefix: db.env.prefix, name: 'subscriptions-handler-test', log });
  t.teardown(() => bus.close());
  const { member, other } = db.people;
  const subscribe = { authorization_errors_fatal: true, announce: false, invite_only: false, is_web_public: false };

  t.test('a request gets its reply, and the outbox is relayed', async (t) => {
    const r = await bus.request(subscriptionsRpc.subscribe, { actor: member.actor, subscriptions: [{ name: 'Wittenberg' }], principals: [member.id, other.id], ...subscribe });
    t.same(r, { subscribed: { [member.email]: ['Wittenberg'], [other.email]: ['Wittenberg'] }, already_subscribed: {} });
    await running.flushOutbox();
    t.same(await db.outbox(), [], 'the relay published and removed every row');
  });

  t.test('errors cross the wire with their code, or without one', async (t) => {
    await bus.request(subscriptionsRpc.subscribe, { actor: member.actor, subscriptions: [{ name: 'Closet' }], ...subscribe, invite_only: true });
    const e = await bus.request(subscriptionsRpc.subscribe, { actor: other.actor, subscriptions: [{ name: 'Closet' }], ...subscribe }).catch((x: unknown) => x);
    t.match(e, { code: null, message: 'Unable to access channel (Closet).', httpStatus: 400 });
    const denied = await bus.request(subscriptionsRpc.listStreams, {
      actor: other.actor,
      include_public: true,
      include_web_public: false,
      include_subscribed: true,
      include_all_active: true,
      include_default: false,
      include_owner_subscribed: false,
    }).catch((x: unknown) => x);
    t.match(denied, { code: 'BAD_REQUEST', message: 'User not authorized for this query' });
  });

  t.test('a request that does not match its contract is refused', async (t) => {
    const e = await bus.request(subscriptionsRpc.unsubscribe, { actor: member.actor, subscriptions: 'Wittenberg' } as never).catch((x: unknown) => x);
    t.match(e, { code: 'BAD_REQUEST', message: 'Malformed internal request' });
  });

  t.test('streamAccess answers for other services by id or name', async (t) => {
    const byName = await bus.request(subscriptionsRpc.streamAccess, { realm_id: REALM_ID, user_id: other.id, stream: { name: 'wittenberg' } });
    t.match(byName, { stream: { name: 'Wittenberg', realm_id: REALM_ID, invite_only: false }, subscribed: true, subscriber_ids: [member.id, other.id] });
    const byId = await bus.request(subscriptionsRpc.streamAccess, { realm_id: REALM_ID, user_id: other.id, stream: { stream_id: byName.stream?.stream_id as number } });
    t.same(byId, byName);
    t.same(await bus.request(subscriptionsRpc.streamAccess, { realm_id: REALM_ID, user_id: other.id, stream: { name: 'Nowhere' } }), { stream: null, subscribed: false, subscriber_ids: [] });
  });

  t.test('the read model follows users.evt events: a deactivated user is no subscriber', async (t) => {
    await bus.publish(usersEvents.userUpdated, { ...personRecord(other.id, 'other', other.role), is_active: false }, { msgId: 'deactivate-other' });
    const gone = await until(async () => {
      const r = await bus.request(subscriptionsRpc.streamAccess, { realm_id: REALM_ID, user_id: member.id, stream: { name: 'Wittenberg' } });
      return r.subscriber_ids.length === 1;
    });
    t.ok(gone, 'the subscriber list no longer holds the deactivated user');
  });

  t.test('message.sent events feed first_message_id', async (t) => {
    const access = await bus.request(subscriptionsRpc.streamAccess, { realm_id: REALM_ID, user_id: member.id, stream: { name: 'Wittenberg' } });
    const streamId = access.stream?.stream_id as number;
    await bus.publish(messagesEvents.messageSent, { realm_id: REALM_ID, message_id: 77, stream_id: streamId, sender_id: member.id, timestamp: Math.floor(Date.now() / 1000) }, { msgId: 'sent-77' });
    const seen = await until(async () => {
      const r = await bus.request(subscriptionsRpc.listSubscriptions, { actor: member.actor, include_subscribers: false });
      return r.subscriptions.some((s) => s.stream_id === streamId && s.first_message_id === 77);
    });
    t.ok(seen);
  });
});
