/**
 * The authorization matrix (issue 13, step 6): every privileged endpoint tried by every lesser
 * role, by a bot, by a deactivated user, without credentials and from another realm; other
 * users' resources and private objects by people who may not touch them. Each refusal is
 * asserted exactly (status, code, message), and the refused attempts together emit no event.
 *
 * One table: a row is an endpoint and the least role allowed; the matrix tries it as each role
 * below that. Rows never run as an allowed role, so the fixtures stay as they were.
 */
import t, { type Test } from 'tap';
import { Role } from '@zc/shared/contracts';
import { loadConfig } from '@zc/shared/config';
import { createPool } from '@zc/shared/db';
import { createLogger } from '@zc/shared/logging';
import { doCreateRealm, makeDeps } from '@zc/users/manage';
import type { ApiClient, ApiResponse, Params } from '../client.js';
import { startSystem, type Account } from '../harness.js';
import { QueuePoller } from './events-support.js';

type Method = 'get' | 'post' | 'patch' | 'delete';
interface Refusal {
  status: number;
  /** null: the spec gives this error no code (api-spec §7), so the body has none. */
  code: string | null;
  msg: string;
}
interface Fixtures {
  publicStream: number;
  privateStream: number;
  publicMessage: number;
  /** A web-public stream (the realm allows spectators) only iago is subscribed to, and a message in it. */
  webStream: number;
  webMessage: number;
  privateMessage: number;
  /** In a private stream with protected history, sent before othello joined. */
  vaultMessage: number;
  /** In a private stream othello was removed from after it was sent. */
  leftMessage: number;
  linkifier: number;
  profileField: number;
  group: number;
  draft: number;
  queue: string;
  iago: number;
  desdemona: number;
  othello: number;
  hamlet: number;
  deactivated: number;
}
interface Row {
  what: string;
  method: Method;
  path: (f: Fixtures) => string;
  params?: (f: Fixtures) => Params;
  /** Roles that must be refused (the least privileged first). */
  refused: readonly RoleName[];
  refusal: Refusal;
}
type RoleName = 'admin' | 'moderator' | 'member' | 'guest' | 'bot';

const err = (msg: string, code: string | null = 'BAD_REQUEST', status = 400): Refusal => ({ status, code, msg });
const MUST_BE_ADMIN = err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
const MUST_BE_OWNER = err('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL');
const BELOW_ADMIN: RoleName[] = ['moderator', 'member', 'guest', 'bot'];

/** Administrative endpoints and the refusal every role below the least allowed one gets. */
const ADMIN_ROWS: Row[] = [
  { what: 'rename the realm', method: 'patch', path: () => '/realm', params: () => ({ name: 'Taken over' }), refused: BELOW_ADMIN, refusal: MUST_BE_ADMIN },
  { what: 'add a linkifier', method: 'post', path: () => '/realm/filters', params: () => ({ pattern: '#(?P<id>[0-9]+)', url_template: 'https://x.test/{id}' }), refused: BELOW_ADMIN, refusal: MUST_BE_ADMIN },
  { what: 'edit a linkifier', method: 'patch', path: (f) => `/realm/filters/${f.linkifier}`, params: () => ({ pattern: '#(?P<id>[0-9]+)', url_template: 'https://evil.test/{id}' }), refused: BELOW_ADMIN, refusal: MUST_BE_ADMIN },
  { what: 'remove a linkifier', method: 'delete', path: (f) => `/realm/filters/${f.linkifier}`, refused: BELOW_ADMIN, refusal: MUST_BE_ADMIN },
  { what: 'reorder linkifiers', method: 'patch', path: () => '/realm/linkifiers', params: (f) => ({ ordered_linkifier_ids: JSON.stringify([f.linkifier]) }), refused: BELOW_ADMIN, refusal: MUST_BE_ADMIN },
  { what: 'add a profile field', method: 'post', path: () => '/realm/profile_fields', params: () => ({ name: 'Shoe size', field_type: 1 }), refused: BELOW_ADMIN, refusal: MUST_BE_ADMIN },
  { what: 'edit a profile field', method: 'patch', path: (f) => `/realm/profile_fields/${f.profileField}`, params: () => ({ name: 'Renamed' }), refused: BELOW_ADMIN, refusal: MUST_BE_ADMIN },
  { what: 'remove a profile field', method: 'delete', path: (f) => `/realm/profile_fields/${f.profileField}`, refused: BELOW_ADMIN, refusal: MUST_BE_ADMIN },
  { what: 'reorder profile fields', method: 'patch', path: () => '/realm/profile_fields', params: (f) => ({ order: JSON.stringify([f.profileField]) }), refused: BELOW_ADMIN, refusal: MUST_BE_ADMIN },
  { what: "change someone's name", method: 'patch', path: (f) => `/users/${f.othello}`, params: () => ({ full_name: 'Renamed' }), refused: BELOW_ADMIN, refusal: MUST_BE_ADMIN },
  { what: "change someone's role", method: 'patch', path: (f) => `/users/${f.othello}`, params: () => ({ role: Role.ADMINISTRATOR }), refused: BELOW_ADMIN, refusal: MUST_BE_ADMIN },
  { what: 'deactivate someone', method: 'delete', path: (f) => `/users/${f.othello}`, refused: BELOW_ADMIN, refusal: MUST_BE_ADMIN },
  { what: 'deactivate an unknown id (no existence oracle)', method: 'delete', path: () => '/users/987654', refused: BELOW_ADMIN, refusal: MUST_BE_ADMIN },
  { what: 'reactivate someone', method: 'post', path: (f) => `/users/${f.deactivated}/reactivate`, refused: BELOW_ADMIN, refusal: MUST_BE_ADMIN },
  { what: 'delete a stream', method: 'delete', path: (f) => `/streams/${f.publicStream}`, refused: BELOW_ADMIN, refusal: MUST_BE_ADMIN },
  { what: 'delete a topic', method: 'post', path: (f) => `/streams/${f.publicStream}/delete_topic`, params: () => ({ topic_name: 't' }), refused: BELOW_ADMIN, refusal: MUST_BE_ADMIN },
  { what: 'make someone an owner', method: 'patch', path: (f) => `/users/${f.othello}`, params: () => ({ role: Role.OWNER }), refused: ['admin'], refusal: MUST_BE_OWNER },
  { what: "change an owner's role", method: 'patch', path: (f) => `/users/${f.iago}`, params: () => ({ role: Role.MEMBER }), refused: ['admin'], refusal: MUST_BE_OWNER },
  { what: 'deactivate an owner', method: 'delete', path: (f) => `/users/${f.iago}`, refused: ['admin'], refusal: MUST_BE_OWNER },
];

/** Other people's resources and private objects, tried by someone who may not touch them. */
const RESOURCE_ROWS: Array<Omit<Row, 'refused'> & { by: RoleName | 'othello' }> = [
  { what: "read a private stream's message as a non-subscriber", by: 'othello', method: 'get', path: (f) => `/messages/${f.privateMessage}`, refusal: err('Invalid message(s)') },
  { what: "a private stream's members as a non-subscriber", by: 'othello', method: 'get', path: (f) => `/streams/${f.privateStream}/members`, refusal: err('Invalid channel ID') },
  { what: "edit someone else's message", by: 'othello', method: 'patch', path: (f) => `/messages/${f.publicMessage}`, params: () => ({ content: 'not yours' }), refusal: err("You don't have permission to edit this message") },
  { what: "delete someone else's message", by: 'othello', method: 'delete', path: (f) => `/messages/${f.publicMessage}`, refusal: err("You don't have permission to delete this message") },
  { what: "edit someone else's draft", by: 'othello', method: 'patch', path: (f) => `/drafts/${f.draft}`, params: () => ({ draft: JSON.stringify({ type: 'stream', to: [], topic: 't', content: 'x' }) }), refusal: err('Draft does not exist', null, 404) },
  { what: "delete someone else's draft", by: 'othello', method: 'delete', path: (f) => `/drafts/${f.draft}`, refusal: err('Draft does not exist', null, 404) },
  { what: "poll someone else's queue", by: 'othello', method: 'get', path: () => '/events', params: (f) => ({ queue_id: f.queue, last_event_id: -1, dont_block: true }), refusal: { status: 400, code: 'BAD_EVENT_QUEUE_ID', msg: 'Bad event queue ID: QUEUE' } },
  { what: "delete someone else's queue", by: 'othello', method: 'delete', path: () => '/events', params: (f) => ({ queue_id: f.queue }), refusal: { status: 400, code: 'BAD_EVENT_QUEUE_ID', msg: 'Bad event queue ID: QUEUE' } },
  { what: "a private stream message's read receipts as a non-subscriber", by: 'othello', method: 'get', path: (f) => `/messages/${f.privateMessage}/read_receipts`, refusal: err('Invalid message(s)') },
  { what: 'an administrator deletes a topic of a private stream they are not in', by: 'admin', method: 'post', path: (f) => `/streams/${f.privateStream}/delete_topic`, params: () => ({ topic_name: 't' }), refusal: err('Invalid channel ID') },
  { what: 'protected history: read receipts of a message from before one joined', by: 'othello', method: 'get', path: (f) => `/messages/${f.vaultMessage}/read_receipts`, refusal: err('Invalid message(s)') },
  { what: 'removed from a private stream: read receipts of its message', by: 'othello', method: 'get', path: (f) => `/messages/${f.leftMessage}/read_receipts`, refusal: err('Invalid message(s)') },
  { what: 'protected history: a message from before one joined', by: 'othello', method: 'get', path: (f) => `/messages/${f.vaultMessage}`, refusal: err('Invalid message(s)') },
  { what: 'protected history: react to it', by: 'othello', method: 'post', path: (f) => `/messages/${f.vaultMessage}/reactions`, params: () => ({ emoji_name: 'smile' }), refusal: err('Invalid message(s)') },
  { what: 'removed from a private stream: read its message', by: 'othello', method: 'get', path: (f) => `/messages/${f.leftMessage}`, refusal: err('Invalid message(s)') },
  // (Starring it stays allowed, as in Zulip: the flag is on the user's own row and shows nothing.)
  { what: 'removed from a private stream: react to its message', by: 'othello', method: 'post', path: (f) => `/messages/${f.leftMessage}/reactions`, params: () => ({ emoji_name: 'smile' }), refusal: err('Invalid message(s)') },
  { what: 'removed from a private stream: edit its topic', by: 'othello', method: 'patch', path: (f) => `/messages/${f.leftMessage}`, params: () => ({ topic: 'mine now' }), refusal: err('Invalid message(s)') },
  { what: 'a guest reads a public stream they are not in', by: 'guest', method: 'get', path: (f) => `/messages/${f.publicMessage}`, refusal: err('Invalid message(s)') },
  // Zulip's has_message_access: web-public gives a guest no more than public does.
  { what: 'a guest reads a web-public stream they are not in', by: 'guest', method: 'get', path: (f) => `/messages/${f.webMessage}`, refusal: err('Invalid message(s)') },
  { what: 'a guest reacts in a web-public stream they are not in', by: 'guest', method: 'post', path: (f) => `/messages/${f.webMessage}/reactions`, params: () => ({ emoji_name: 'smile' }), refusal: err('Invalid message(s)') },
  { what: 'a member makes a stream web-public (administrators only by default)', by: 'member', method: 'patch', path: (f) => `/streams/${f.publicStream}`, params: () => ({ is_web_public: true }), refusal: MUST_BE_ADMIN },
  { what: 'a guest subscribes someone to a stream they cannot access', by: 'guest', method: 'post', path: () => '/users/me/subscriptions', params: (f) => ({ subscriptions: JSON.stringify([{ name: 'Matrix public' }]), principals: JSON.stringify([f.othello]) }), refusal: err('Unable to access channel (Matrix public).', null) },
];

// Zulip's WEB_PUBLIC_STREAMS_ENABLED server setting, which the subscriptions service reads from
// its environment at start (each test file runs in a process of its own).
process.env.ZC_WEB_PUBLIC_STREAMS_ENABLED = 'true';

t.test('authorization matrix', async (t) => {
  const sys = await startSystem(t);
  const { iago, desdemona, hamlet, othello, polonius, bot } = sys.people;
  const moderator = await sys.createUser({ email: 'moderator@zulip.test', full_name: 'Moderator', role: Role.MODERATOR });
  const leaver = await sys.createUser({ email: 'leaver@zulip.test', full_name: 'Leaver' });
  const owner = sys.client(iago);
  const h = sys.client(hamlet);

  // Fixtures, all created by their owners before the matrix runs.
  await h.post('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'Matrix public' }]) });
  await owner.post('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'Matrix private' }]), invite_only: true, principals: JSON.stringify([iago.user_id, hamlet.user_id]) });
  await owner.post('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'Matrix vault' }]), invite_only: true, history_public_to_subscribers: false });
  const vaultMessage = (await owner.post('/messages', { type: 'stream', to: 'Matrix vault', topic: 't', content: 'before othello' })).body.id as number;
  await owner.post('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'Matrix vault' }]), principals: JSON.stringify([othello.user_id]) });
  await owner.post('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'Matrix left' }]), invite_only: true, principals: JSON.stringify([iago.user_id, othello.user_id]) });
  const leftMessage = (await owner.post('/messages', { type: 'stream', to: 'Matrix left', topic: 't', content: 'othello saw this' })).body.id as number;
  t.equal((await owner.delete('/users/me/subscriptions', { subscriptions: JSON.stringify(['Matrix left']), principals: JSON.stringify([othello.user_id]) })).status, 200);
  const streamId = async (name: string) => (await owner.get('/get_stream_id', { stream: name })).body.stream_id as number;
  const linkifier = await owner.post('/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_template: 'https://tracker.test/{id}' });
  const field = await owner.post('/realm/profile_fields', { name: 'Team', field_type: 1 });
  const draft = await h.post('/drafts', { drafts: JSON.stringify([{ type: 'private', to: [], topic: '', content: 'mine' }]) });
  const queue = await h.post('/register', { event_types: JSON.stringify(['message']) });
  t.equal((await owner.patch('/realm', { enable_spectator_access: true })).status, 200, 'the realm allows spectators');
  const web = await owner.post('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'Matrix web' }]), is_web_public: true });
  t.equal(web.status, 200, 'a web-public stream');
  t.equal((await owner.delete(`/users/${leaver.user_id}`)).status, 200);
  const f: Fixtures = {
    publicStream: await streamId('Matrix public'),
    privateStream: await streamId('Matrix private'),
    publicMessage: (await h.post('/messages', { type: 'stream', to: 'Matrix public', topic: 't', content: 'public words' })).body.id as number,
    webStream: await streamId('Matrix web'),
    webMessage: (await owner.post('/messages', { type: 'stream', to: 'Matrix web', topic: 't', content: 'words for the world' })).body.id as number,
    privateMessage: (await owner.post('/messages', { type: 'stream', to: 'Matrix private', topic: 't', content: 'secret words' })).body.id as number,
    vaultMessage,
    leftMessage,
    linkifier: linkifier.body.id as number,
    profileField: field.body.id as number,
    group: 0,
    draft: (draft.body.ids as number[])[0] as number,
    queue: queue.body.queue_id as string,
    iago: iago.user_id,
    desdemona: desdemona.user_id,
    othello: othello.user_id,
    hamlet: hamlet.user_id,
    deactivated: leaver.user_id,
  };
  for (const [k, v] of Object.entries(f)) if (k !== 'group') t.ok(v, `fixture ${k}`);

  const clients: Record<RoleName | 'othello', ApiClient> = {
    admin: sys.client(desdemona),
    moderator: sys.client(moderator),
    member: h,
    guest: sys.client(polonius),
    bot: sys.client(bot),
    othello: sys.client(othello),
  };
  // Everything the refused attempts could emit reaches iago's queue (an owner hears it all).
  const { poller: watcher } = await QueuePoller.register(owner, { all_public_streams: true });

  const call = (c: ApiClient, m: Method, path: string, params: Params = {}): Promise<ApiResponse> => c[m](path, params);
  const expectRefusal = (t: Test, r: ApiResponse, want: Refusal, label: string) => {
    const msg = want.msg.replace('QUEUE', f.queue);
    t.equal(r.status, want.status, `${label}: status`);
    if (want.code === null) t.same(r.body, { result: 'error', msg }, `${label}: ${msg} (no code)`);
    else t.match(r.body, { result: 'error', code: want.code, msg }, `${label}: ${msg}`);
  };

  t.test('privileged endpoints × lesser roles', async (t) => {
    for (const row of ADMIN_ROWS) {
      for (const role of row.refused) {
        expectRefusal(t, await call(clients[role], row.method, row.path(f), row.params?.(f)), row.refusal, `${row.what} as ${role}`);
      }
    }
  });

  t.test("other people's resources and private objects", async (t) => {
    for (const row of RESOURCE_ROWS) expectRefusal(t, await call(clients[row.by], row.method, row.path(f), row.params?.(f)), row.refusal, row.what);
  });

  t.test('no credentials, bad credentials, a deactivated account: 401 on every privileged endpoint', async (t) => {
    const anonymous = sys.anonymous();
    const wrongKey = sys.client({ ...hamlet, api_key: 'x'.repeat(32) });
    const gone = sys.client(leaver);
    for (const row of ADMIN_ROWS) {
      const label = `${row.method.toUpperCase()} ${row.path(f)}`;
      expectRefusal(t, await call(anonymous, row.method, row.path(f), row.params?.(f)), err('Not logged in: API authentication or user session required', null, 401), `${label} without credentials`);
      expectRefusal(t, await call(wrongKey, row.method, row.path(f), row.params?.(f)), err('Invalid API key', 'INVALID_API_KEY', 401), `${label} with a wrong key`);
      expectRefusal(t, await call(gone, row.method, row.path(f), row.params?.(f)), err('Account is deactivated', 'USER_DEACTIVATED', 401), `${label} deactivated`);
    }
  });

  t.test("another realm's owner reaches nothing of this realm", async (t) => {
    const pool = createPool(sys.env.databaseUrl, { max: 1 });
    t.teardown(() => pool.end());
    const deps = makeDeps({ pool, config: loadConfig(sys.env.config), log: createLogger({ service: 'test', level: 'silent' }) });
    const other = await doCreateRealm(deps, { name: 'Norway', subdomain: 'norway', owner: { email: 'fortinbras@norway.test', password: 'x'.repeat(12), full_name: 'Fortinbras' } });
    const fortinbras: Account = { user_id: other.owner.id, email: 'fortinbras@norway.test', api_key: other.apiKey, full_name: 'Fortinbras', password: '' };
    await sys.flushOutboxes();
    const norway = sys.client(fortinbras, { host: 'norway.localhost' });
    for (let i = 0; i < 100 && (await norway.get('/users/me')).status !== 200; i++) await new Promise((r) => setTimeout(r, 50));
    const rows: Array<[string, Method, string, Params, Refusal]> = [
      ['read a user', 'get', `/users/${f.hamlet}`, {}, err('No such user')],
      ["change a user's role", 'patch', `/users/${f.othello}`, { role: Role.OWNER }, err('No such user')],
      ['deactivate a user', 'delete', `/users/${f.othello}`, {}, err('No such user')],
      ['read a message', 'get', `/messages/${f.publicMessage}`, {}, err('Invalid message(s)')],
      ['edit a message', 'patch', `/messages/${f.publicMessage}`, { content: 'annexed' }, err('Invalid message(s)')],
      ['delete a message', 'delete', `/messages/${f.publicMessage}`, {}, err('Invalid message(s)')],
      ['read a stream', 'get', `/streams/${f.publicStream}`, {}, err('Invalid channel ID')],
      ['delete a stream', 'delete', `/streams/${f.publicStream}`, {}, err('Invalid channel ID')],
      ["a message's read receipts", 'get', `/messages/${f.publicMessage}/read_receipts`, {}, err('Invalid message(s)')],
      ['delete a topic', 'post', `/streams/${f.publicStream}/delete_topic`, { topic_name: 't' }, err('Invalid channel ID')],
      ['edit a linkifier', 'patch', `/realm/filters/${f.linkifier}`, { pattern: '#(?P<id>[0-9]+)', url_template: 'https://evil.test/{id}' }, err('Linkifier not found.')],
      ['remove a profile field', 'delete', `/realm/profile_fields/${f.profileField}`, {}, err('Field id 0 not found.'.replace('0', String(f.profileField)))],
      ['subscribe a user', 'post', '/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'Fjord' }]), principals: JSON.stringify([f.hamlet]) }, err(`User not authorized to execute queries on behalf of '${f.hamlet}'`, 'UNAUTHORIZED_PRINCIPAL', 403)],
      ['poll a queue', 'get', '/events', { queue_id: f.queue, last_event_id: -1, dont_block: true }, { status: 400, code: 'BAD_EVENT_QUEUE_ID', msg: 'Bad event queue ID: QUEUE' }],
    ];
    for (const [what, m, path, params, want] of rows) expectRefusal(t, await call(norway, m, path, params), want, what);
    expectRefusal(t, await sys.client(fortinbras).get('/users/me'), err('Invalid API key', 'INVALID_API_KEY', 401), "their key on this realm's address");
  });

  t.test('web-public streams: members read them; spectators get nothing from the API', async (t) => {
    // Zulip serves spectators on its web app's paths (/json/…) only: its REST API (/api/v1)
    // authenticates every request but the login-free ones (server_settings, fetch_api_key), so
    // a web-public narrow without credentials is refused like anything else, and a wrong key
    // never falls back to spectator access.
    const anonymous = sys.anonymous();
    const wrongKey = sys.client({ ...hamlet, api_key: 'x'.repeat(32) });
    const webNarrow = JSON.stringify([{ operator: 'stream', operand: f.webStream }]);
    const rows: Array<[string, Method, string, Params]> = [
      ['a web-public stream narrow', 'get', '/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: webNarrow }],
      ['streams:web-public', 'get', '/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: JSON.stringify([{ operator: 'streams', operand: 'web-public' }]) }],
      ['a web-public message', 'get', `/messages/${f.webMessage}`, {}],
      ['matches_narrow', 'get', '/messages/matches_narrow', { msg_ids: JSON.stringify([f.webMessage]), narrow: webNarrow }],
      ['web-public streams', 'get', '/streams', { include_web_public: true, include_public: false, include_subscribed: false }],
      ['a web-public stream', 'get', `/streams/${f.webStream}`, {}],
      ["a web-public stream's topics", 'get', `/users/me/${f.webStream}/topics`, {}],
      ["a web-public stream's members", 'get', `/streams/${f.webStream}/members`, {}],
      ['the users', 'get', '/users', {}],
      ['a queue', 'post', '/register', {}],
      ['send to a web-public stream', 'post', '/messages', { type: 'stream', to: 'Matrix web', topic: 't', content: 'anonymous' }],
      ['react to a web-public message', 'post', `/messages/${f.webMessage}/reactions`, { emoji_name: 'smile' }],
      ['subscribe', 'post', '/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'Matrix web' }]) }],
    ];
    for (const [what, m, path, params] of rows) {
      expectRefusal(t, await call(anonymous, m, path, params), err('Not logged in: API authentication or user session required', null, 401), `${what} as a spectator`);
      expectRefusal(t, await call(wrongKey, m, path, params), err('Invalid API key', 'INVALID_API_KEY', 401), `${what} with a wrong key`);
    }

    const member = await clients.othello.get(`/messages/${f.webMessage}`);
    t.equal(member.status, 200, 'a member who is not subscribed reads a web-public message');
    const history = await clients.othello.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: webNarrow });
    t.same((history.body.messages as Array<{ id: number }>).map((m) => m.id), [f.webMessage], 'and its history');
    const guest = await clients.guest.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: JSON.stringify([{ operator: 'streams', operand: 'public' }]) });
    t.notOk((guest.body.messages as Array<{ id: number }> | undefined)?.some((m) => m.id === f.webMessage), "streams:public gives a guest none of a web-public stream's history");
  });

  t.test('the refused attempts emitted no event', async (t) => {
    const marker = (await sys.client(othello).post('/messages', { type: 'private', to: JSON.stringify([iago.user_id]), content: 'end of the matrix' })).body.id as number;
    const events = await watcher.collect(1);
    t.same(events.map((e) => [e.type, (e.message as { id?: number } | undefined)?.id]), [['message', marker]], 'only the marker reached the owner');
  });
});
