/**
 * checkAddSubscriptions against real PostgreSQL with realm settings the API cannot change
 * yet: web-public streams, and the realm policies for creating streams and inviting.
 */
import t from 'tap';
import { checkAddSubscriptions } from '../../src/actions/subscribe.js';
import type { SubscriptionsDeps } from '../../src/deps.js';
import { Policy } from '@zc/shared/policy';
import { streamStore } from '../../src/store/stream-store.js';
import { REALM_ID, subscriptionsTestDb, type Person } from '../helpers.js';

const request = (p: Person, extra: Record<string, unknown> = {}) => ({
  actor: p.actor,
  subscriptions: [{ name: 'Stage' }],
  authorization_errors_fatal: true,
  announce: false,
  invite_only: false,
  is_web_public: false,
  ...extra,
});

t.test('subscribe action', async (t) => {
  const db = await subscriptionsTestDb(t, { webPublicStreamsEnabled: true });
  const { owner, admin, member, other, guest } = db.people;
  const setRealm = (settings: Record<string, unknown>) =>
    db.deps.directory.store.upsertRealm(db.pool, { realm_id: REALM_ID, subdomain: '', name: 'Elsinore', description: '', deactivated: false, url: 'http://zulip.test:9991', settings, date_created: 0 });
  const rejection = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e);

  t.test('owners create web-public streams, which every user hears of', async (t) => {
    await setRealm({ enable_spectator_access: true });
    const denied = await rejection(checkAddSubscriptions(db.deps, request(admin, { subscriptions: [{ name: 'Globe' }], is_web_public: true })));
    t.match(denied, { code: 'BAD_REQUEST', message: 'Insufficient permission' }, 'the default policy is owners only');
    await db.clearOutbox();
    const r = await checkAddSubscriptions(db.deps, request(owner, { subscriptions: [{ name: 'Globe' }], is_web_public: true }));
    t.same(r, { subscribed: { [owner.email]: ['Globe'] }, already_subscribed: {} });
    t.match(await streamStore.findByName(db.pool, REALM_ID, 'Globe'), { is_web_public: true, invite_only: false, history_public_to_subscribers: true });
    const rows = await db.outbox();
    const create = rows.find((r) => r.subject === 'events.inbox.v1.notify' && (r.payload.event as { type: string }).type === 'stream');
    t.same(create?.payload.users, [owner.id, admin.id, member.id, other.id, guest.id], 'guests too');
    const guestJoins = await checkAddSubscriptions(db.deps, request(guest, { subscriptions: [{ name: 'Globe' }] }));
    t.same(guestJoins.subscribed, { [guest.email]: ['Globe'] }, 'guests may join web-public streams');
    const both = await rejection(checkAddSubscriptions(db.deps, request(owner, { subscriptions: [{ name: 'Odd' }], is_web_public: true, invite_only: true })));
    t.match(both, { message: 'Invalid parameters' });
  });

  t.test('web-public streams need the server setting and the realm’s spectator access', async (t) => {
    await setRealm({ enable_spectator_access: false });
    const realmOff = await rejection(checkAddSubscriptions(db.deps, request(owner, { subscriptions: [{ name: 'Globe 2' }], is_web_public: true })));
    t.match(realmOff, { code: 'BAD_REQUEST', message: 'Web-public channels are not enabled.' });
    await setRealm({ enable_spectator_access: true });
    const serverOff: SubscriptionsDeps = { ...db.deps, settings: { webPublicStreamsEnabled: false, newRealmStreams: false } };
    const off = await rejection(checkAddSubscriptions(serverOff, request(owner, { subscriptions: [{ name: 'Globe 2' }], is_web_public: true })));
    t.match(off, { code: 'BAD_REQUEST', message: 'Web-public channels are not enabled.' });
    t.equal(await streamStore.findByName(db.pool, REALM_ID, 'Globe 2'), undefined);
  });

  t.test('the realm decides who creates streams and who subscribes others', async (t) => {
    await setRealm({ create_public_stream_policy: Policy.ADMINS_ONLY, create_private_stream_policy: Policy.MEMBERS_ONLY });
    t.match(await rejection(checkAddSubscriptions(db.deps, request(member))), { message: 'Insufficient permission' });
    const priv = await checkAddSubscriptions(db.deps, request(member, { invite_only: true }));
    t.same(priv.subscribed, { [member.email]: ['Stage'] }, 'private creation follows its own policy');
    await setRealm({ create_public_stream_policy: Policy.FULL_MEMBERS_ONLY, waiting_period_threshold: 100000 });
    t.match(await rejection(checkAddSubscriptions(db.deps, request(member, { subscriptions: [{ name: 'Newcomers' }] }))), { message: 'Insufficient permission' }, 'not yet a full member');

    await setRealm({ invite_to_stream_policy: Policy.ADMINS_ONLY });
    await checkAddSubscriptions(db.deps, request(member, { subscriptions: [{ name: 'Open' }] }));
    const invite = request(member, { subscriptions: [{ name: 'Open' }], principals: [other.id] });
    t.match(await rejection(checkAddSubscriptions(db.deps, invite)), { message: 'Insufficient permission' });
    const byAdmin = await checkAddSubscriptions(db.deps, request(admin, { subscriptions: [{ name: 'Open' }], principals: [other.id, member.id] }));
    t.same(byAdmin, { subscribed: { [other.email]: ['Open'] }, already_subscribed: { [member.email]: ['Open'] } });
  });

  t.test('announce writes streamAnnounced for each stream created, and only for those', async (t) => {
    await setRealm({});
    await db.clearOutbox();
    await checkAddSubscriptions(db.deps, request(member, { subscriptions: [{ name: 'Open' }, { name: 'Fresh' }, { name: 'Fresher' }], announce: true }));
    const announced = (await db.outbox()).filter((r) => r.subject === 'subscriptions.evt.v1.stream.announced').map((r) => r.payload.stream_name);
    t.same(announced, ['Fresh', 'Fresher']);
  });
});
