/**
 * /register's reply is relayed as JSON text from the state owners to the client (the events
 * service and the gateway splice it, see shared/src/bus/raw-json.ts): it is still one well-formed
 * success envelope, no key is given twice, and unknown parameters are reported as elsewhere.
 */
import t from 'tap';
import { startSystem } from '../harness.js';

t.test('/register relayed as text', async (t) => {
  const sys = await startSystem(t);
  const h = sys.client(sys.people.hamlet);
  const post = async (body: string) => {
    const res = await fetch(`${sys.baseUrl}/api/v1/register`, {
      method: 'POST',
      headers: h.headers({ 'content-type': 'application/x-www-form-urlencoded' }),
      body,
    });
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  };

  t.test('the whole state: one envelope, every key once', async (t) => {
    const r = await post('');
    t.equal(r.status, 200);
    t.match(r.type, /^application\/json/);
    const body = JSON.parse(r.text) as Record<string, unknown>;
    t.match(body, { result: 'success', msg: '', queue_id: String, last_event_id: -1, zulip_feature_level: Number });
    t.ok(Array.isArray(body.realm_users) && (body.realm_users as unknown[]).length >= 5, 'the people');
    t.type(body.streams, Array, 'an owner other than users');
    t.same(Object.keys(body).slice(0, 2), ['result', 'msg']);
    // Serialised again, a key given twice in the text would be there once: the text would shrink.
    t.equal(JSON.stringify(body).length, r.text.length, 'no key is given twice');
    t.notOk('ignored_parameters_unsupported' in body);
  });

  t.test('an unknown parameter is reported', async (t) => {
    const r = await post('fetch_event_types=%5B%22realm_user%22%5D&bogus=1&other_bogus=2');
    const body = JSON.parse(r.text) as Record<string, unknown>;
    t.equal(body.result, 'success');
    t.same(body.ignored_parameters_unsupported, ['bogus', 'other_bogus']);
    t.ok(Array.isArray(body.realm_users));
    t.notOk('streams' in body, 'only what was fetched');
    t.equal(JSON.stringify(body).length, r.text.length, 'no key is given twice');
  });

  t.test('errors keep their envelope', async (t) => {
    const r = await post('queue_lifespan_secs=-5');
    t.equal(r.status, 400);
    t.match(JSON.parse(r.text), { result: 'error', code: 'BAD_REQUEST' });
    const bad = await post('event_types=notjson');
    t.equal(bad.status, 400);
    t.match(JSON.parse(bad.text), { result: 'error', code: 'BAD_REQUEST' });
  });
});
