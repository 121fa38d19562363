/**
 * Code playgrounds (FL 49, `url_prefix` at our level): administrators add and remove them,
 * with Zulip's errors; /register's realm_playgrounds and the realm_playgrounds events agree
 * (apply-events check).
 */
import t from 'tap';
import { startSystem } from '../harness.js';
import type { Params } from '../client.js';
import { verifyAction } from './events-verify.js';

t.test('realm playgrounds', async (t) => {
  const sys = await startSystem(t);
  const { desdemona, hamlet, iago } = sys.people;
  const admin = sys.client(desdemona);
  const base: Params = { client_gravatar: false, apply_markdown: true, event_types: ['realm_playgrounds'], fetch_event_types: ['realm_playgrounds'] };
  const python = { name: 'Python playground', pygments_language: 'Python', url_prefix: 'https://python.example.com?code=' };

  t.test('add and remove, with events', async (t) => {
    let id = 0;
    const events = await verifyAction(t, sys, sys.client(hamlet), async () => {
      const r = await admin.post('/realm/playgrounds', python);
      t.equal(r.status, 200, JSON.stringify(r.body));
      id = r.body.id as number;
    }, { params: base, expect: ['realm_playgrounds'] });
    t.same(events[0]!.realm_playgrounds, [{ id, ...python }]);
    const state = (await sys.client(hamlet).post('/register', { fetch_event_types: ['realm_playgrounds'] })).body;
    t.same(state.realm_playgrounds, [{ id, ...python }], 'every member gets the list');
    // The same language with another name is another playground (Zulip's unique key is realm, language and name).
    const other = await sys.client(iago).post('/realm/playgrounds', { ...python, name: 'Python sandbox' });
    t.equal(other.status, 200);
    await verifyAction(t, sys, admin, () => admin.delete(`/realm/playgrounds/${id}`), { params: base, expect: ['realm_playgrounds'] });
    const after = (await admin.post('/register', { fetch_event_types: ['realm_playgrounds'] })).body.realm_playgrounds as Array<{ id: number }>;
    t.same(after.map((p) => p.id), [other.body.id]);
  });

  t.test("Zulip's errors", async (t) => {
    const refused = async (params: Record<string, string>, msg: string, code = 'BAD_REQUEST', who = admin) => {
      const r = await who.post('/realm/playgrounds', params);
      t.equal(r.status, 400, msg);
      t.equal(r.body.code, code);
      t.equal(r.body.msg, msg);
    };
    await refused(python, 'Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL', sys.client(hamlet));
    await refused({ ...python, name: 'Rust', pygments_language: 'Rust' }, 'Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL', sys.client(hamlet));
    await refused({ name: 'x', pygments_language: 'Python' }, 'Missing \'url_prefix\' argument', 'REQUEST_VARIABLE_MISSING');
    await refused({ ...python, url_prefix: 'not a url' }, 'Enter a valid URL.');
    await refused({ ...python, url_prefix: 'javascript:alert(1)' }, 'Enter a valid URL.');
    await refused({ ...python, pygments_language: 'py<script>' }, 'Invalid characters in pygments language');
    await refused({ ...python, name: '' }, 'This field cannot be blank.');
    await refused({ ...python, name: 'n'.repeat(65) }, 'Ensure this value has at most 64 characters (it has 65).');
    t.equal((await admin.post('/realm/playgrounds', { ...python, name: 'Twice' })).status, 200);
    const dup = await admin.post('/realm/playgrounds', { ...python, name: 'Twice' });
    t.same(dup.body.msg, 'Realm playground with this Realm, Pygments language and Name already exists.');
    const gone = await admin.delete('/realm/playgrounds/999999');
    t.same([gone.status, gone.body.code, gone.body.msg], [400, 'BAD_REQUEST', 'Invalid playground']);
    const list = (await admin.post('/register', { fetch_event_types: ['realm_playgrounds'] })).body.realm_playgrounds as Array<{ id: number }>;
    const member = await sys.client(hamlet).delete(`/realm/playgrounds/${list[0]!.id}`);
    t.same([member.status, member.body.code], [400, 'UNAUTHORIZED_PRINCIPAL'], 'members cannot remove one');
  });
});
