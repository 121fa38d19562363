/** /bot_storage end to end: entries per user, Zulip's errors, and the storage size limit. */
import t from 'tap';
import { startSystem } from '../harness.js';

const ok = { result: 'success', msg: '' };
const noKey = { result: 'error', code: 'BAD_REQUEST', msg: 'Key does not exist.' };

t.test('bot storage', async (t) => {
  const sys = await startSystem(t);
  const { bot, hamlet } = sys.people;
  const b = sys.client(bot);

  t.test('put, get, delete', async (t) => {
    t.same((await b.get('/bot_storage')).body, { ...ok, storage: {} });
    t.same((await b.put('/bot_storage', { storage: { 'entry 1': 'value 1', 'entry 2': 'value 2', 'entry 3': 'value 3' } })).body, ok);
    t.same((await b.get('/bot_storage')).body, { ...ok, storage: { 'entry 1': 'value 1', 'entry 2': 'value 2', 'entry 3': 'value 3' } });
    t.same((await b.get('/bot_storage', { keys: ['entry 1', 'entry 3'] })).body, { ...ok, storage: { 'entry 1': 'value 1', 'entry 3': 'value 3' } });
    t.same((await b.put('/bot_storage', { storage: { 'entry 2': 'changed' } })).body, ok);
    t.same((await b.get('/bot_storage', { keys: ['entry 2'] })).body.storage, { 'entry 2': 'changed' });
    t.same((await b.delete('/bot_storage', { keys: ['entry 1'] })).body, ok);
    t.same((await b.get('/bot_storage')).body.storage, { 'entry 2': 'changed', 'entry 3': 'value 3' });
  });

  t.test('unknown keys and bad values', async (t) => {
    const get = await b.get('/bot_storage', { keys: ['entry 2', 'nope'] });
    t.equal(get.status, 400);
    t.same(get.body, noKey);
    t.same((await b.delete('/bot_storage', { keys: ['entry 2', 'nope'] })).body, noKey);
    t.same((await b.get('/bot_storage')).body.storage, { 'entry 2': 'changed', 'entry 3': 'value 3' }, 'a refused delete removes nothing');
    t.match((await b.put('/bot_storage', { storage: { a: 1 } })).body, { result: 'error', code: 'BAD_REQUEST', var_name: 'storage' });
    t.match((await b.put('/bot_storage', { storage: ['a'] })).body, { result: 'error', code: 'BAD_REQUEST', var_name: 'storage' });
    t.match((await b.put('/bot_storage', { storage: 'not json' })).body, { result: 'error', msg: 'Argument "storage" is not valid JSON.' });
    t.same((await b.put('/bot_storage', {})).body, { result: 'error', code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'storage' argument", var_name: 'storage' });
    t.match((await b.get('/bot_storage', { keys: 'entry 2' })).body, { result: 'error', var_name: 'keys' });
    t.same((await b.put('/bot_storage', { storage: { 'nul\u0000': 'x' } })).body, { result: 'error', code: 'BAD_REQUEST', msg: 'storage must not contain null bytes', var_name: 'storage' });
    t.same((await b.get('/bot_storage', { keys: ['nul\u0000'] })).body, { result: 'error', code: 'BAD_REQUEST', msg: 'keys must not contain null bytes', var_name: 'keys' });
  });

  t.test("each user has their own storage; an empty key list means every key", async (t) => {
    const h = sys.client(hamlet);
    t.same((await h.get('/bot_storage')).body.storage, {});
    t.same((await h.put('/bot_storage', { storage: { mine: 'yes' } })).body, ok);
    t.same((await b.get('/bot_storage', { keys: ['mine'] })).body, noKey);
    t.same((await h.delete('/bot_storage', { keys: [] })).body, ok);
    t.same((await h.get('/bot_storage')).body.storage, {});
  });

  t.test('the storage holds at most 10,000,000 characters of keys and values', async (t) => {
    const c = sys.client((await sys.createUser({ email: 'storage-bot@zulip.test', full_name: 'Storage bot', is_bot: true })));
    await sys.flushOutboxes();
    const chunk = 'x'.repeat(900_000);
    for (let i = 0; i < 11; i++) {
      const r = await c.put('/bot_storage', { storage: { [`k${i}`]: chunk } });
      t.same(r.body, ok, `entry ${i}`);
    }
    // k0..k10 hold 9,900,023 characters of keys and values; a twelfth entry of 900,003 passes the limit.
    const over = await c.put('/bot_storage', { storage: { k11: chunk } });
    t.same(over.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Request exceeds storage limit by 800026 characters. The limit is 10000000 characters.' });
    t.same((await c.get('/bot_storage', { keys: ['k11'] })).body, noKey, 'nothing was stored');
    t.same((await c.put('/bot_storage', { storage: { k0: 'small' } })).body, ok, 'replacing an entry counts only the difference');
    t.same((await c.put('/bot_storage', { storage: { k11: chunk } })).body, ok);
  });
});
