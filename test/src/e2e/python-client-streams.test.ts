/**
 * python-zulip-api (the Zulip project's own Python bindings, unmodified) administering a
 * stream against a running system: update_stream (description, rename, privacy),
 * get_subscribers and get_stream_topics on the result, delete_stream, and the errors a
 * member gets; add_default_stream. Skipped when the client checkout or python3 is absent.
 */
import t from 'tap';
import { startSystem } from '../harness.js';
import { pythonZulipMissing, runPythonZulip } from '../real-clients.js';


const SCRIPT = `
import json, sys, zulip
site, admin_email, admin_key, member_email, member_key, stream_id = sys.argv[1:7]
stream_id = int(stream_id)
admin = zulip.Client(site=site, email=admin_email, api_key=admin_key, client="ZulipStreamsTest/1.0")
member = zulip.Client(site=site, email=member_email, api_key=member_key, client="ZulipStreamsTest/1.0")
out = {
  "member_update": member.update_stream({"stream_id": stream_id, "description": "mine now"}),
  "update_description": admin.update_stream({"stream_id": stream_id, "description": "Where **Romeo** lives"}),
  "update_name": admin.update_stream({"stream_id": stream_id, "new_name": "Fair Verona"}),
  "update_private": admin.update_stream({"stream_id": stream_id, "is_private": True, "history_public_to_subscribers": True}),
  "update_bad": admin.update_stream({"stream_id": stream_id, "is_private": False, "history_public_to_subscribers": False}),
  "get_stream_id": member.get_stream_id("Fair Verona"),
  "get_subscribers": member.get_subscribers(stream="Fair Verona"),
  "get_stream_topics": member.get_stream_topics(stream_id),
  "member_delete": member.delete_stream(stream_id),
  "delete": admin.delete_stream(stream_id),
  "delete_again": admin.delete_stream(stream_id),
  "after_delete": member.get_stream_id("Fair Verona"),
}
print(json.dumps(out))
`;

const missing = pythonZulipMissing();

t.test('python-zulip-api update_stream and delete_stream', { skip: missing ?? false }, async (t) => {
  const sys = await startSystem(t);
  const { hamlet, othello, desdemona } = sys.people;
  await sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Verona' }], principals: [hamlet.user_id, othello.user_id, desdemona.user_id] });
  const streamId = (await sys.client(hamlet).get('/get_stream_id', { stream: 'Verona' })).body.stream_id as number;
  await sys.client(hamlet).post('/messages', { type: 'stream', to: streamId, topic: 'balcony', content: 'wherefore' });
  const stdout = await runPythonZulip(SCRIPT, [sys.baseUrl, desdemona.email, desdemona.api_key, hamlet.email, hamlet.api_key, String(streamId)]);
  const r = JSON.parse(stdout) as Record<string, Record<string, unknown>>;
  for (const call of ['update_description', 'update_name', 'update_private', 'get_stream_id', 'get_subscribers', 'get_stream_topics', 'delete']) {
    t.equal(r[call]?.result, 'success', `${call}: ${JSON.stringify(r[call])}`);
  }
  t.match(r.member_update, { result: 'error', code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization administrator' });
  t.match(r.update_bad, { result: 'error', code: 'BAD_REQUEST', msg: 'Invalid parameters' });
  t.equal(r.get_stream_id?.stream_id, streamId, 'the stream answers to its new name');
  t.same(r.get_subscribers?.subscribers, [desdemona.user_id, hamlet.user_id, othello.user_id].sort((a, b) => a - b));
  // Newest first: the bot's notices of the changes, then the topic the stream had.
  t.same((r.get_stream_topics?.topics as Array<{ name: string }>).map((x) => x.name), ['stream events', 'balcony']);
  t.match(r.member_delete, { result: 'error', code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization administrator' });
  t.match(r.delete_again, { result: 'error', code: 'BAD_REQUEST', msg: 'Invalid channel ID' });
  t.match(r.after_delete, { result: 'error', code: 'BAD_REQUEST', msg: "Invalid channel name 'Fair Verona'" });
  const stream = (await sys.client(desdemona).get('/streams', { include_all_active: true })).body.streams as Array<Record<string, unknown>>;
  t.notOk(stream.some((s) => s.stream_id === streamId), 'archived');
});

const DEFAULT_STREAMS_SCRIPT = `
import json, sys, zulip
site, admin_email, admin_key, member_email, member_key, public_id, private_id = sys.argv[1:8]
admin = zulip.Client(site=site, email=admin_email, api_key=admin_key, client="ZulipStreamsTest/1.0")
member = zulip.Client(site=site, email=member_email, api_key=member_key, client="ZulipStreamsTest/1.0")
out = {
  "member_add": member.add_default_stream(int(public_id)),
  "add_private": admin.add_default_stream(int(private_id)),
  "add_unknown": admin.add_default_stream(999999),
  "add": admin.add_default_stream(int(public_id)),
  "after_add": member.register(fetch_event_types=["default_streams"]),
}
# The bindings have no method for the removal: their generic call, as a script would use it.
out["remove"] = admin.call_endpoint(url="default_streams", method="DELETE", request={"stream_id": int(public_id)})
out["after_remove"] = member.register(fetch_event_types=["default_streams"])
print(json.dumps(out))
`;

t.test('python-zulip-api add_default_stream, and the removal through call_endpoint', { skip: missing ?? false }, async (t) => {
  const sys = await startSystem(t);
  const { hamlet, iago, desdemona } = sys.people;
  await sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Verona' }] });
  await sys.client(desdemona).post('/users/me/subscriptions', { subscriptions: [{ name: 'Crypt' }], invite_only: true });
  const publicId = (await sys.client(hamlet).get('/get_stream_id', { stream: 'Verona' })).body.stream_id as number;
  const privateId = (await sys.client(desdemona).get('/get_stream_id', { stream: 'Crypt' })).body.stream_id as number;
  const stdout = await runPythonZulip(DEFAULT_STREAMS_SCRIPT, [sys.baseUrl, desdemona.email, desdemona.api_key, hamlet.email, hamlet.api_key, String(publicId), String(privateId)]);
  const r = JSON.parse(stdout) as Record<string, Record<string, unknown>>;
  t.match(r.member_add, { result: 'error', code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization administrator' });
  t.match(r.add_private, { result: 'error', code: 'BAD_REQUEST', msg: 'Private channels cannot be made default.' });
  t.match(r.add_unknown, { result: 'error', code: 'BAD_REQUEST', msg: 'Invalid channel ID' });
  t.same(r.add, { result: 'success', msg: '' });
  t.match(r.after_add?.realm_default_streams, [{ stream_id: publicId, name: 'Verona' }]);
  t.equal((r.after_add?.realm_default_streams as unknown[]).length, 1);
  t.same(r.remove, { result: 'success', msg: '' });
  t.same(r.after_remove?.realm_default_streams, []);
  // Added again, it is what a new user joins.
  t.equal((await sys.client(iago).post('/default_streams', { stream_id: publicId })).status, 200);
  const newcomer = await sys.createUser({ email: 'laertes@zulip.test', full_name: 'Laertes' });
  let names: string[] = [];
  for (let i = 0; i < 60 && names.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 50));
    names = ((await sys.client(newcomer).get('/users/me/subscriptions')).body.subscriptions as Array<{ name: string }>).map((s) => s.name);
  }
  t.same(names, ['Verona'], 'a user created afterwards is in it');
});
