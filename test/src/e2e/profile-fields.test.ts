/**
 * Custom profile fields end to end: the administrators' definitions (create, change, reorder,
 * delete) with Zulip's validation, and people's values (their own, or set by an administrator).
 */
import t from 'tap';
import { startSystem } from '../harness.js';

const ok = { result: 'success', msg: '' };
const err = (msg: string) => ({ result: 'error', code: 'BAD_REQUEST', msg });

t.test('custom profile fields', async (t) => {
  const sys = await startSystem(t);
  const { iago, desdemona, hamlet, othello, polonius, bot } = sys.people;
  const admin = sys.client(desdemona);
  const h = sys.client(hamlet);
  const fields = async () => (await h.get('/realm/profile_fields')).body.custom_fields as Array<Record<string, unknown>>;
  const profileOf = async (id: number) =>
    ((await h.get(`/users/${id}`, { include_custom_profile_fields: true })).body.user as Record<string, unknown>).profile_data as Record<string, unknown>;
  const ids: Record<string, number> = {};

  t.test('only administrators define fields', async (t) => {
    for (const who of [hamlet, polonius, bot]) {
      const r = await sys.client(who).post('/realm/profile_fields', { name: 'Phone', field_type: 1 });
      t.equal(r.status, 400);
      t.same(r.body, { result: 'error', code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization administrator' });
      t.same((await sys.client(who).patch('/realm/profile_fields', { order: [] })).body.code, 'UNAUTHORIZED_PRINCIPAL');
      t.same((await sys.client(who).patch('/realm/profile_fields/1', { name: 'x' })).body.code, 'UNAUTHORIZED_PRINCIPAL');
      t.same((await sys.client(who).delete('/realm/profile_fields/1')).body.code, 'UNAUTHORIZED_PRINCIPAL');
    }
    t.same(await fields(), []);
  });

  t.test('creating fields of each kind', async (t) => {
    const create = async (key: string, p: Record<string, unknown>) => {
      const r = await admin.post('/realm/profile_fields', p as never);
      t.equal(r.body.result, 'success', key);
      ids[key] = r.body.id as number;
    };
    await create('phone', { name: 'Phone', hint: 'Your number', field_type: 1, display_in_profile_summary: true });
    await create('bio', { name: 'Biography', field_type: 2 });
    await create('editor', { name: 'Editor', field_type: 3, field_data: { vim: { text: 'Vim', order: '1' }, emacs: { text: 'Emacs', order: '2' } } });
    await create('birthday', { name: 'Birthday', field_type: 4 });
    await create('site', { name: 'Website', field_type: 5 });
    await create('mentor', { name: 'Mentor', field_type: 6 });
    await create('github', { field_type: 7, field_data: { subtype: 'github' } });
    await create('pronouns', { name: 'Pronouns', field_type: 8 });
    const list = await fields();
    t.same(list.map((f) => f.id), Object.values(ids), 'in creation order');
    t.match(list[0], { id: ids.phone, name: 'Phone', hint: 'Your number', type: 1, field_data: '', display_in_profile_summary: true, required: false, editable_by_user: true });
    t.notOk('display_in_profile_summary' in (list[1] as object), 'the key is present only when true');
    t.match(list.find((f) => f.id === ids.editor), { field_data: '{"vim":{"text":"Vim","order":"1"},"emacs":{"text":"Emacs","order":"2"}}' });
    t.match(list.find((f) => f.id === ids.github), { name: 'GitHub', hint: 'Enter your GitHub username', field_data: '{"subtype":"github"}' });
    const reg = await h.post('/register', { fetch_event_types: ['custom_profile_fields'] });
    t.same(reg.body.custom_profile_fields, list);
    t.match(reg.body.custom_profile_field_types, { SHORT_TEXT: { id: 1, name: 'Short text' }, PRONOUNS: { id: 8, name: 'Pronouns' } });
    await h.delete('/events', { queue_id: reg.body.queue_id as string });
  });

  t.test('bad definitions are refused', async (t) => {
    const cases: Array<[Record<string, unknown>, Record<string, unknown>]> = [
      [{ name: 'Phone', field_type: 1 }, err('A field with that label already exists.')],
      [{ name: '  ', field_type: 1 }, err('Label cannot be blank.')],
      [{ field_type: 1 }, err('Label cannot be blank.')],
      [{ name: 'x'.repeat(41), field_type: 1 }, err('name is too long (limit: 40 characters)')],
      [{ name: 'Hinted', hint: 'x'.repeat(81), field_type: 1 }, err('hint is too long (limit: 80 characters)')],
      [{ name: 'Odd', field_type: 9 }, err('Invalid field type.')],
      [{ name: 'Odd', field_type: 'text' }, { ...err('field_type is not an integer'), var_name: 'field_type' }],
      [{ name: 'Odd' }, { result: 'error', code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'field_type' argument", var_name: 'field_type' }],
      [{ name: 'Choice', field_type: 3 }, err('Field must have at least one choice.')],
      [{ name: 'Choice', field_type: 3, field_data: { a: { text: 'A', order: '1' }, b: { text: 'A', order: '2' } } }, err('Field must not have duplicate choices.')],
      [{ name: 'Choice', field_type: 3, field_data: { a: { text: '', order: '1' } } }, err('field_data["a"]["text"] cannot be blank.')],
      [{ name: 'Choice', field_type: 3, field_data: { a: { text: 'A' } } }, err('field_data["a"] key is missing: order')],
      [{ name: 'Choice', field_type: 3, field_data: '[1]' }, { ...err('field_data is not a dict'), var_name: 'field_data' }],
      [{ name: 'Account', field_type: 7, field_data: { subtype: 'myspace' } }, err('Invalid external account type')],
      [{ name: 'Account', field_type: 7, field_data: { subtype: 'custom' } }, err('Custom external account must define URL pattern')],
      [{ name: 'Account', field_type: 7, field_data: { subtype: 'custom', url_pattern: 'https://x.example/' } }, err('username should appear exactly once in pattern.')],
      [{ name: 'GitHub', field_type: 7, field_data: { subtype: 'github' } }, err('A field with that label already exists.')],
      [{ name: 'Essay', field_type: 2, display_in_profile_summary: true }, err('Field type not supported for display in profile summary.')],
    ];
    for (const [p, body] of cases) {
      const r = await admin.post('/realm/profile_fields', p as never);
      t.equal(r.status, 400);
      t.same(r.body, body, JSON.stringify(p).slice(0, 60));
    }
    t.same((await admin.post('/realm/profile_fields', { name: 'Location', field_type: 1, display_in_profile_summary: true })).body.result, 'success');
    const third = await admin.post('/realm/profile_fields', { name: 'Team', field_type: 1, display_in_profile_summary: true });
    t.same(third.body, err('Only 2 custom profile fields can be displayed in the profile summary.'));
    t.same((await admin.post('/realm/profile_fields', { name: 'Tracker', field_type: 7, field_data: { subtype: 'custom', url_pattern: 'https://t.example/%(username)s' } })).body.result, 'success');
  });

  t.test('changing, reordering and deleting fields', async (t) => {
    t.same((await admin.patch(`/realm/profile_fields/${ids.phone}`, { name: 'Telephone', hint: 'Work number' })).body, ok);
    t.match((await fields()).find((f) => f.id === ids.phone), { name: 'Telephone', hint: 'Work number', type: 1, display_in_profile_summary: true }, 'what was not given is kept');
    t.same((await admin.patch(`/realm/profile_fields/${ids.phone}`, { name: 'Biography' })).body, err('A field with that label already exists.'));
    t.same((await admin.patch(`/realm/profile_fields/${ids.site}`, { display_in_profile_summary: true })).body, err('Only 2 custom profile fields can be displayed in the profile summary.'));
    t.same((await admin.patch(`/realm/profile_fields/${ids.phone}`, { display_in_profile_summary: false })).body, ok);
    t.same((await admin.patch(`/realm/profile_fields/${ids.bio}`, { display_in_profile_summary: true })).body, err('Field type not supported for display in profile summary.'));
    t.same((await admin.patch(`/realm/profile_fields/${ids.github}`, { name: 'Code' })).body, err('Default custom field cannot be updated.'));
    t.same((await admin.patch('/realm/profile_fields/999999', { name: 'x' })).body, err('Field id 999999 not found.'));
    t.same((await admin.patch(`/realm/profile_fields/${ids.editor}`, { field_data: {} })).body, err('Field must have at least one choice.'));

    const all = (await fields()).map((f) => f.id as number);
    const reversed = [...all].reverse();
    t.same((await admin.patch('/realm/profile_fields', { order: reversed })).body, ok);
    const after = await fields();
    t.same(after.map((f) => f.id), reversed);
    t.same(after.map((f) => f.order), reversed.map((_, i) => i));
    t.same((await admin.patch('/realm/profile_fields', { order: reversed.slice(1) })).body, err('Invalid order mapping.'));
    t.same((await admin.patch('/realm/profile_fields', { order: 'x' })).body.code, 'BAD_REQUEST');

    const doomed = (await admin.post('/realm/profile_fields', { name: 'Doomed', field_type: 1 })).body.id as number;
    t.same((await h.patch('/users/me/profile_data', { data: [{ id: doomed, value: 'soon gone' }] })).body, ok);
    t.same((await sys.client(iago).delete(`/realm/profile_fields/${doomed}`)).body, ok);
    t.notOk(String(doomed) in (await profileOf(hamlet.user_id)), 'values go with their field');
    t.same((await admin.delete(`/realm/profile_fields/${doomed}`)).body, err(`Field id ${doomed} not found.`));
  });

  t.test('people set their own values', async (t) => {
    const r = await h.patch('/users/me/profile_data', {
      data: [
        { id: ids.phone, value: '**555** 1234' },
        { id: ids.editor, value: 'vim' },
        { id: ids.birthday, value: '1600-04-23' },
        { id: ids.site, value: 'https://elsinore.example/' },
        { id: ids.mentor, value: [othello.user_id] },
        { id: ids.pronouns, value: 'he/him' },
      ],
    });
    t.same(r.body, ok);
    const data = await profileOf(hamlet.user_id);
    t.same(data[String(ids.phone)], { value: '**555** 1234', rendered_value: '<p><strong>555</strong> 1234</p>' });
    t.same(data[String(ids.editor)], { value: 'vim' });
    t.same(data[String(ids.mentor)], { value: `[${othello.user_id}]` });
    const me = await h.get('/users/me');
    t.same((me.body.profile_data as Record<string, unknown>)[String(ids.birthday)], { value: '1600-04-23' });
  });

  t.test('bad values are refused and change nothing', async (t) => {
    const before = await profileOf(hamlet.user_id);
    const cases: Array<[unknown, Record<string, unknown>]> = [
      [[{ id: 999999, value: 'x' }], err('Field id 999999 not found.')],
      [[{ id: ids.phone, value: 'x'.repeat(51) }], err('Telephone is too long (limit: 50 characters)')],
      [[{ id: ids.bio, value: 'x'.repeat(501) }], err('Biography is too long (limit: 500 characters)')],
      [[{ id: ids.birthday, value: '1600-02-30' }], err('Birthday is not a date')],
      [[{ id: ids.site, value: 'not a url' }], err('Website is not a URL')],
      [[{ id: ids.editor, value: 'ed' }], err("'ed' is not a valid choice for 'Editor'.")],
      [[{ id: ids.mentor, value: [999999] }], err('Invalid user ID: 999999')],
      [[{ id: ids.mentor, value: [bot.user_id] }], err(`User with ID ${bot.user_id} is a bot`)],
      [[{ id: ids.mentor, value: 'othello' }], err('Mentor is not a list')],
      [[{ id: ids.phone, value: 555 }], { ...err('Invalid data[0]'), var_name: 'data' }],
      [[{ id: ids.phone }], { var_name: 'data', code: 'BAD_REQUEST' }],
    ];
    for (const [data, body] of cases) {
      const r = await h.patch('/users/me/profile_data', { data: data as never });
      t.equal(r.status, 400);
      t.match(r.body, body, JSON.stringify(data).slice(0, 60));
    }
    t.same((await h.patch('/users/me/profile_data', {})).body.code, 'REQUEST_VARIABLE_MISSING');
    t.same((await sys.client(bot).patch('/users/me/profile_data', { data: [{ id: ids.phone, value: '1' }] })).body, err('This endpoint does not accept bot requests.'));
    t.same((await sys.client(bot).delete('/users/me/profile_data', { data: [ids.phone] })).body, err('This endpoint does not accept bot requests.'));
    t.same(await profileOf(hamlet.user_id), before);
  });

  t.test('removing own values', async (t) => {
    t.same((await h.delete('/users/me/profile_data', { data: [ids.phone, ids.bio] })).body, ok, 'a value never set is no error');
    t.notOk(String(ids.phone) in (await profileOf(hamlet.user_id)));
    t.same((await h.delete('/users/me/profile_data', { data: [999999] })).body, err('Field id 999999 not found.'));
  });

  t.test('administrators set and clear other people\'s values with PATCH /users/{id}', async (t) => {
    t.same((await admin.patch(`/users/${othello.user_id}`, { profile_data: [{ id: ids.phone, value: '777' }, { id: ids.pronouns, value: 'he/him' }] })).body, ok);
    t.match(await profileOf(othello.user_id), { [String(ids.phone)]: { value: '777' }, [String(ids.pronouns)]: { value: 'he/him' } });
    t.same((await admin.patch(`/users/${othello.user_id}`, { profile_data: [{ id: ids.phone, value: null }, { id: ids.pronouns, value: '' }] })).body, ok);
    t.same(await profileOf(othello.user_id), {});
    t.same((await admin.patch(`/users/${othello.user_id}`, { profile_data: [{ id: ids.birthday, value: 'yesterday' }] })).body, err('Birthday is not a date'));
    t.same((await h.patch(`/users/${othello.user_id}`, { profile_data: [{ id: ids.phone, value: '1' }] })).body.code, 'UNAUTHORIZED_PRINCIPAL');
    t.same((await admin.patch(`/users/${othello.user_id}`, { profile_data: [{ id: 'x' }] })).body.var_name, 'profile_data');
  });
});
