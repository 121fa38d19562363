/** POST /users/me/status end to end: Zulip's errors, /register's user_status, and its events applied. */
import t from 'tap';
import { startSystem } from '../harness.js';
import { register } from './events-support.js';
import { verifyAction } from './events-verify.js';

const ok = { result: 'success', msg: '' };
const err = (msg: string) => ({ result: 'error', code: 'BAD_REQUEST', msg });

t.test('user status', async (t) => {
  const sys = await startSystem(t);
  const { hamlet, othello } = sys.people;
  const h = sys.client(hamlet);
  const statuses = async () => {
    const r = await register(sys.client(othello), { fetch_event_types: ['user_status'] });
    await sys.client(othello).delete('/events', { queue_id: r.queue_id });
    return r.user_status as Record<string, unknown>;
  };

  t.test('bad requests', async (t) => {
    const cases: Array<[Record<string, unknown>, Record<string, unknown>]> = [
      [{}, err('Client did not pass any new values.')],
      [{ emoji_code: '1f697' }, err('Client did not pass any new values.')],
      [{ status_text: 'x'.repeat(61) }, err('status_text is too long (limit: 60 characters)')],
      [{ status_text: 'x', emoji_code: '1f697' }, err('Client must pass emoji_name if they pass either emoji_code or reaction_type.')],
      [{ status_text: 'x', reaction_type: 'unicode_emoji' }, err('Client must pass emoji_name if they pass either emoji_code or reaction_type.')],
      [{ emoji_name: 'no_such_emoji' }, err("Emoji 'no_such_emoji' does not exist")],
      [{ emoji_name: 'car', emoji_code: 'zzzz' }, err('Invalid emoji code.')],
      [{ emoji_name: 'car', emoji_code: '1f600' }, err('Invalid emoji name.')],
      [{ emoji_name: 'car', reaction_type: 'sticker' }, err('Invalid emoji type.')],
      [{ emoji_name: 'party', emoji_code: '42', reaction_type: 'realm_emoji' }, err('Invalid custom emoji.')],
      [{ away: 5 }, { ...err('away is not a boolean'), var_name: 'away' }],
    ];
    for (const [p, body] of cases) {
      const r = await h.post('/users/me/status', p as never);
      t.equal(r.status, 400);
      t.same(r.body, body, JSON.stringify(p).slice(0, 60));
    }
    t.same(await statuses(), {}, 'nothing was set');
  });

  t.test('setting and clearing a status', async (t) => {
    t.same((await h.post('/users/me/status', { status_text: '  on vacation ', emoji_name: 'car' })).body, ok);
    t.same(await statuses(), { [hamlet.user_id]: { status_text: 'on vacation', emoji_name: 'car', emoji_code: '1f697', reaction_type: 'unicode_emoji' } });
    t.same((await h.post('/users/me/status', { emoji_name: 'zulip' })).body, ok);
    t.same(await statuses(), { [hamlet.user_id]: { status_text: 'on vacation', emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' } });
    t.same((await h.post('/users/me/status', { status_text: '', emoji_name: '' })).body, ok);
    t.same(await statuses(), {});
  });

  t.test('away is the negation of presence_enabled', async (t) => {
    t.same((await h.post('/users/me/status', { away: true })).body, ok);
    t.same(await statuses(), { [hamlet.user_id]: { away: true } });
    const me = await register(h, { fetch_event_types: ['user_settings'] });
    t.equal((me.user_settings as Record<string, unknown>).presence_enabled, false);
    await h.delete('/events', { queue_id: me.queue_id });
    t.same((await h.post('/users/me/status', { away: false })).body, ok);
    t.same(await statuses(), {});
  });

  t.test('user_status events applied to register state equal a fresh register', async (t) => {
    const params = { client_gravatar: false, event_types: ['user_status'] };
    const o = sys.client(othello);
    await verifyAction(t, sys, o, () => h.post('/users/me/status', { status_text: 'To be', emoji_name: 'skull' }), { params, expect: ['user_status'] });
    await verifyAction(t, sys, o, () => h.post('/users/me/status', { emoji_name: '' }), { params, expect: ['user_status'] });
    await verifyAction(t, sys, o, () => h.post('/users/me/status', { status_text: '' }), { params, expect: ['user_status'] });
  });
});
