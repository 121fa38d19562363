/** The wire form of register_state replies (register-state.ts) and the splicing of JSON texts. */
import t from 'tap';
import { RawJson, spliceObjects } from '../src/bus/raw-json.js';
import { readRegisterStateReply, registerStateReply } from '../src/contracts/register-state.js';

t.test('a reply written by registerStateReply is read back without parsing the state', async (t) => {
  const state = { realm_users: [{ user_id: 1, full_name: 'A "quoted" ,"state": name}}' }], zulip: null, skipped: undefined };
  const reply = registerStateReply('10:20:11,12', state);
  const read = readRegisterStateReply(reply);
  t.equal(read.snapshot, '10:20:11,12');
  t.same(read.keys, ['realm_users', 'zulip'], 'undefined members are not keys, as JSON.stringify drops them');
  t.same(JSON.parse(read.state.text), { realm_users: state.realm_users, zulip: null });
  // What request() of the same contract sees.
  t.same(JSON.parse(reply.text), { snapshot: '10:20:11,12', keys: ['realm_users', 'zulip'], state: { realm_users: state.realm_users, zulip: null } });
});

t.test('an empty state', async (t) => {
  const read = readRegisterStateReply(registerStateReply('1:1:', {}));
  t.same(read, { snapshot: '1:1:', keys: [], state: new RawJson('{}') });
});

t.test('a reply in another form (an older replica, other key order) is parsed', async (t) => {
  const read = readRegisterStateReply(new RawJson('{"state":{"b":1,"a":[2]},"snapshot":"5:6:"}'));
  t.same(read.keys, ['b', 'a']);
  t.equal(read.snapshot, '5:6:');
  t.same(JSON.parse(read.state.text), { b: 1, a: [2] });
  t.same(readRegisterStateReply(new RawJson('{"snapshot":"5:6:","state":{"x":true}}')).keys, ['x']);
});

t.test('a reply without snapshot or state is refused', async (t) => {
  t.throws(() => readRegisterStateReply(new RawJson('{"snapshot":"1:1:"}')), SyntaxError);
  t.throws(() => readRegisterStateReply(new RawJson('{"snapshot":1,"keys":[],"state":{}}')), SyntaxError);
  t.throws(() => readRegisterStateReply(new RawJson('{"snapshot":"1:1:","keys":[],"state":{')), SyntaxError);
});

t.test('spliceObjects joins object texts and plain objects', async (t) => {
  const out = spliceObjects([{ a: 1, u: undefined }, new RawJson('{}'), new RawJson(' { "b" : [1,2] } '), {}, { c: 'x' }]);
  t.equal(out.text, '{"a":1,"b" : [1,2],"c":"x"}');
  t.same(JSON.parse(out.text), { a: 1, b: [1, 2], c: 'x' });
  t.equal(spliceObjects([]).text, '{}');
});
