/** POST /users/me/status end to end: Zulip's errors, /register's user_status, and its events applied. */
import t from 'tap';
import { startSystem } from '../harness.js';
import { register } from './events-support.js';
import { verifyAction } from './events-verify.js';
import { imageFile, png, postEmoji } from './realm-emoji-support.js';

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

  t.test('a custom emoji of the realm, asked of the uploads service', async (t) => {
    t.equal((await postEmoji(sys, hamlet, 'party_parrot', [imageFile(await png(32, 32))])).status, 200);
    // Only administrators may override a built-in name.
    t.equal((await postEmoji(sys, sys.people.iago, 'smile', [imageFile(await png(32, 32, { r: 1, g: 2, b: 3 }))])).status, 200);
    const emoji = (await h.get('/realm/emoji')).body.emoji as Record<string, { id: string; name: string }>;
    const idOf = (name: string) => Object.values(emoji).find((e) => e.name === name)?.id as string;
    const parrot = idOf('party_parrot');

    // By name (at once: no read model to wait for), and by name, code and type.
    t.same((await h.post('/users/me/status', { emoji_name: 'party_parrot' })).body, ok);
    t.match(await statuses(), { [hamlet.user_id]: { emoji_name: 'party_parrot', emoji_code: parrot, reaction_type: 'realm_emoji' } });
    t.same((await h.post('/users/me/status', { emoji_name: 'party_parrot', emoji_code: parrot, reaction_type: 'realm_emoji' })).body, ok);
    // A custom emoji named like a built-in one takes the name (Zulip's get_emoji_data).
    t.same((await h.post('/users/me/status', { emoji_name: 'smile' })).body, ok);
    t.match(await statuses(), { [hamlet.user_id]: { emoji_name: 'smile', emoji_code: idOf('smile'), reaction_type: 'realm_emoji' } });
    // The built-in one is still there by its code.
    t.same((await h.post('/users/me/status', { emoji_name: 'smile', emoji_code: '1f642', reaction_type: 'unicode_emoji' })).body, ok);

    const cases: Array<[Record<string, string>, ReturnType<typeof err>]> = [
      [{ emoji_name: 'party_parrot', emoji_code: '999999', reaction_type: 'realm_emoji' }, err('Invalid custom emoji.')],
      [{ emoji_name: 'smile', emoji_code: parrot, reaction_type: 'realm_emoji' }, err('Invalid custom emoji name.')],
    ];
    for (const [body, want] of cases) t.same((await h.post('/users/me/status', body)).body, want, want.msg);

    const events = await verifyAction(t, sys, sys.client(othello), () => h.post('/users/me/status', { emoji_name: 'party_parrot' }), {
      params: { client_gravatar: false, event_types: ['user_status'] },
      expect: ['user_status'],
    });
    t.match(events[0], { type: 'user_status', user_id: hamlet.user_id, emoji_name: 'party_parrot', emoji_code: parrot, reaction_type: 'realm_emoji' });

    // Deactivated a moment ago: refused at once, by name and by code.
    t.equal((await h.delete('/realm/emoji/party_parrot')).status, 200);
    t.same((await h.post('/users/me/status', { emoji_name: 'party_parrot' })).body, err("Emoji 'party_parrot' does not exist"));
    t.same(
      (await h.post('/users/me/status', { emoji_name: 'party_parrot', emoji_code: parrot, reaction_type: 'realm_emoji' })).body,
      err('This custom emoji has been deactivated.'),
    );
  });
});
