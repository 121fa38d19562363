/**
 * python-zulip-api (the Zulip project's own Python bindings, unmodified) calling the settings,
 * people administration, profile field and bot storage endpoints against a running system,
 * as an administrator and as a bot would. Skipped when the client checkout or python3 is absent.
 */
import t from 'tap';
import { startSystem } from '../harness.js';
import { pythonZulipMissing, runPythonZulip } from '../real-clients.js';


const SCRIPT = `
import json, sys, zulip
site, admin_email, admin_key, bot_email, bot_key, target_id = sys.argv[1:7]
target = int(target_id)
a = zulip.Client(site=site, email=admin_email, api_key=admin_key, client="ZulipPeopleTest/1.0")
b = zulip.Client(site=site, email=bot_email, api_key=bot_key, client="ZulipPeopleTest/1.0")
out = {}
out["settings"] = a.call_endpoint(url="settings", method="PATCH", request={"enter_sends": True, "left_side_userlist": True})
out["settings_display"] = a.call_endpoint(url="settings/display", method="PATCH", request={"twenty_four_hour_time": True})
out["settings_notifications"] = a.update_notification_settings({"enable_stream_desktop_notifications": False})
out["get_user_by_id"] = a.get_user_by_id(target)
out["update_user_by_id"] = a.update_user_by_id(target, full_name="Renamed By Python")
out["get_renamed"] = a.get_user_by_id(target)
out["deactivate_user_by_id"] = a.deactivate_user_by_id(target)
out["reactivate_user_by_id"] = a.reactivate_user_by_id(target)
out["get_members"] = a.get_members()
out["create_realm_profile_field"] = a.create_realm_profile_field(name="Team", field_type=1, hint="Which team")
fid = out["create_realm_profile_field"].get("id")
out["update_realm_profile_field"] = a.update_realm_profile_field(field_id=fid, name="Squad")
out["get_realm_profile_fields"] = a.get_realm_profile_fields()
ids = [f["id"] for f in out["get_realm_profile_fields"].get("custom_fields", [])]
out["reorder_realm_profile_fields"] = a.reorder_realm_profile_fields(order=list(reversed(ids)))
out["profile_data"] = a.call_endpoint(url="users/me/profile_data", method="PATCH", request={"data": [{"id": fid, "value": "Blue"}]})
out["create_user"] = a.create_user({"email": "pyuser@zulip.test", "password": "pw-1234567890", "full_name": "Py User"})
out["update_storage"] = b.update_storage({"storage": {"entry 1": "value 1", "entry 2": "value 2"}})
out["get_storage"] = b.get_storage()
out["get_storage_keys"] = b.get_storage({"keys": ["entry 2"]})
out["remove_storage"] = b.call_endpoint(url="bot_storage", method="DELETE", request={"keys": ["entry 1"]})
out["get_storage_after"] = b.get_storage()
out["storage_bad_key"] = b.get_storage({"keys": ["nope"]})
print(json.dumps(out))
`;

const missing = pythonZulipMissing();

t.test('python-zulip-api settings, people administration and bot storage calls', { skip: missing ?? false }, async (t) => {
  const sys = await startSystem(t);
  const { iago, othello, bot } = sys.people;
  const stdout = await runPythonZulip(SCRIPT, [sys.baseUrl, iago.email, iago.api_key, bot.email, bot.api_key, String(othello.user_id)]);
  const r = JSON.parse(stdout) as Record<string, Record<string, unknown>>;
  const ok = Object.keys(r).filter((k) => k !== 'storage_bad_key');
  for (const call of ok) t.equal(r[call]?.result, 'success', `${call}: ${JSON.stringify(r[call])}`);
  t.match(r.get_user_by_id?.user, { user_id: othello.user_id });
  t.match(r.get_renamed?.user, { full_name: 'Renamed By Python' });
  t.ok((r.get_members?.members as Array<{ user_id: number; is_active: boolean }>).some((m) => m.user_id === othello.user_id && m.is_active), 'reactivated');
  t.match(r.get_realm_profile_fields?.custom_fields, [{ name: 'Squad', hint: 'Which team' }]);
  t.type(r.create_user?.user_id, 'number');
  t.same(r.get_storage?.storage, { 'entry 1': 'value 1', 'entry 2': 'value 2' });
  t.same(r.get_storage_keys?.storage, { 'entry 2': 'value 2' });
  t.same(r.get_storage_after?.storage, { 'entry 2': 'value 2' });
  t.match(r.storage_bad_key, { result: 'error', code: 'BAD_REQUEST' });
  const settings = await sys.client(iago).post('/register', { event_types: JSON.stringify(['user_settings']), client_capabilities: JSON.stringify({ user_settings_object: true }) });
  t.match(settings.body.user_settings, { enter_sends: true, left_side_userlist: true, twenty_four_hour_time: true, enable_stream_desktop_notifications: false }, 'the settings took');
});
