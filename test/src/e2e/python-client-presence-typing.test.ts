/**
 * python-zulip-api (the Zulip project's own Python bindings, unmodified) calling presence and
 * typing against a running system: update_presence, get_user_presence, get_realm_presence,
 * set_typing_status. Skipped when the client checkout or python3 is absent.
 */
import t from 'tap';
import { startSystem } from '../harness.js';
import { pythonZulipMissing, runPythonZulip } from '../real-clients.js';


const SCRIPT = `
import json, sys, zulip
site, email, key, other_id, other_email, stream_id = sys.argv[1:7]
c = zulip.Client(site=site, email=email, api_key=key, client="ZulipPresenceTest/1.0")
out = {
  "update_presence": c.update_presence({"status": "active", "ping_only": False, "new_user_input": True, "slim_presence": True}),
  "update_presence_legacy": c.update_presence({"status": "idle"}),
  "get_user_presence": c.get_user_presence(email),
  "get_other_presence": c.get_user_presence(other_email),
  "get_realm_presence": c.get_realm_presence(),
  "typing_direct_start": c.set_typing_status({"op": "start", "to": [int(other_id)]}),
  "typing_direct_stop": c.set_typing_status({"op": "stop", "to": [int(other_id)]}),
  "typing_stream": c.set_typing_status({"op": "start", "type": "stream", "stream_id": int(stream_id), "topic": "python"}),
  "typing_bad": c.set_typing_status({"op": "start", "to": []}),
}
print(json.dumps(out))
`;

const missing = pythonZulipMissing();

t.test('python-zulip-api presence and typing calls', { skip: missing ?? false }, async (t) => {
  const sys = await startSystem(t);
  const { hamlet, othello } = sys.people;
  await sys.client(othello).post('/users/me/presence', { status: 'active' });
  await sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Python' }] });
  const streamId = (await sys.client(hamlet).get('/get_stream_id', { stream: 'Python' })).body.stream_id as number;
  const stdout = await runPythonZulip(SCRIPT, [sys.baseUrl, hamlet.email, hamlet.api_key, String(othello.user_id), othello.email, String(streamId)]);
  const r = JSON.parse(stdout) as Record<string, Record<string, unknown>>;
  for (const call of ['update_presence', 'update_presence_legacy', 'get_user_presence', 'get_other_presence', 'get_realm_presence', 'typing_direct_start', 'typing_direct_stop', 'typing_stream']) {
    t.equal(r[call]?.result, 'success', `${call}: ${JSON.stringify(r[call])}`);
  }
  t.match(r.update_presence?.presences, { [String(hamlet.user_id)]: { active_timestamp: Number, idle_timestamp: Number } });
  t.match(r.update_presence_legacy?.presences, { [othello.email]: { website: { status: 'active' } } });
  t.match(r.get_other_presence?.presence, { aggregated: { status: 'active' } });
  t.match(r.get_realm_presence?.presences, { [hamlet.email]: { aggregated: {} }, [othello.email]: { aggregated: {} } });
  t.match(r.typing_bad, { result: 'error', code: 'BAD_REQUEST', msg: "Empty 'to' list" });
});
