/**
 * python-zulip-api (the Zulip project's own Python bindings, unmodified) on a message's life
 * after sending: add_reaction and remove_reaction (by name, by code, a second user's vote),
 * render_message, and delete_message under the realm's default policy (administrators
 * only), with the errors each gives. Skipped when the client checkout or python3 is absent.
 */
import t from 'tap';
import { startSystem } from '../harness.js';
import { pythonZulipMissing, runPythonZulip } from '../real-clients.js';

const SCRIPT = `
import json, sys, zulip
site, admin_email, admin_key, member_email, member_key, other_email, other_key, message_id = sys.argv[1:9]
message_id = int(message_id)
def client(email, key):
    return zulip.Client(site=site, email=email, api_key=key, client="ZulipMessagesTest/1.0")
admin, member, other = client(admin_email, admin_key), client(member_email, member_key), client(other_email, other_key)
out = {}
out["add_by_name"] = other.add_reaction({"message_id": message_id, "emoji_name": "octopus"})
out["add_by_code"] = member.add_reaction({"message_id": message_id, "emoji_name": "joy", "emoji_code": "1f602", "reaction_type": "unicode_emoji"})
out["add_vote"] = member.add_reaction({"message_id": message_id, "emoji_name": "octopus"})
out["add_again"] = other.add_reaction({"message_id": message_id, "emoji_name": "octopus"})
out["add_unknown"] = other.add_reaction({"message_id": message_id, "emoji_name": "no_such_emoji"})
out["add_missing_message"] = other.add_reaction({"message_id": 99999999, "emoji_name": "octopus"})
out["with_reactions"] = other.get_raw_message(message_id)
out["remove_by_code"] = member.remove_reaction({"message_id": message_id, "emoji_code": "1f602", "reaction_type": "unicode_emoji"})
out["remove_by_name"] = other.remove_reaction({"message_id": message_id, "emoji_name": "octopus"})
out["remove_again"] = other.remove_reaction({"message_id": message_id, "emoji_name": "octopus"})
out["after_removals"] = other.get_raw_message(message_id)
out["render"] = member.render_message({"content": "**Hello** :octopus: @**Othello, the Moor of Venice**"})
out["render_empty"] = member.render_message({"content": ""})
out["render_nothing"] = member.render_message()
out["delete_by_member"] = member.delete_message(message_id)
out["delete_by_admin"] = admin.delete_message(message_id)
out["delete_again"] = admin.delete_message(message_id)
out["after_delete"] = member.get_raw_message(message_id)
print(json.dumps(out))
`;

const missing = pythonZulipMissing();

t.test('python-zulip-api add_reaction, remove_reaction, render_message and delete_message', { skip: missing ?? false }, async (t) => {
  const sys = await startSystem(t);
  const { hamlet, othello, desdemona } = sys.people;
  await sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Verona' }], principals: [hamlet.user_id, othello.user_id] });
  const sent = await sys.client(hamlet).post('/messages', { type: 'stream', to: 'Verona', topic: 'balcony', content: 'wherefore' });
  const messageId = sent.body.id as number;
  const stdout = await runPythonZulip(SCRIPT, [sys.baseUrl, desdemona.email, desdemona.api_key, hamlet.email, hamlet.api_key, othello.email, othello.api_key, String(messageId)]);
  const r = JSON.parse(stdout) as Record<string, Record<string, unknown>>;

  for (const call of ['add_by_name', 'add_by_code', 'add_vote', 'remove_by_code', 'remove_by_name', 'render', 'delete_by_admin']) {
    t.equal(r[call]?.result, 'success', `${call}: ${JSON.stringify(r[call])}`);
  }
  t.match(r.add_again, { result: 'error', code: 'REACTION_ALREADY_EXISTS', msg: 'Reaction already exists.' });
  t.match(r.add_unknown, { result: 'error', code: 'BAD_REQUEST', msg: "Emoji 'no_such_emoji' does not exist" });
  t.match(r.add_missing_message, { result: 'error', code: 'BAD_REQUEST', msg: 'Invalid message(s)' });
  const reactions = (r.with_reactions?.message as { reactions: Array<Record<string, unknown>> }).reactions;
  t.same(
    reactions.map((x) => [x.emoji_name, x.emoji_code, x.reaction_type, x.user_id]),
    [
      ['octopus', '1f419', 'unicode_emoji', othello.user_id],
      ['joy', '1f602', 'unicode_emoji', hamlet.user_id],
      ['octopus', '1f419', 'unicode_emoji', hamlet.user_id],
    ],
    'each reaction on the message, in the order made',
  );
  t.match(r.remove_again, { result: 'error', code: 'REACTION_DOES_NOT_EXIST', msg: "Reaction doesn't exist." });
  t.same(
    (r.after_removals?.message as { reactions: Array<Record<string, unknown>> }).reactions.map((x) => [x.emoji_name, x.user_id]),
    [['octopus', hamlet.user_id]],
    "hamlet's vote stays",
  );

  t.match(r.render?.rendered, /^<p><strong>Hello<\/strong> <span aria-label="octopus" class="emoji emoji-1f419" role="img" title="octopus">:octopus:<\/span> <span class="user-mention" data-user-id="\d+">@Othello, the Moor of Venice<\/span><\/p>$/);
  t.same(r.render_empty, { result: 'success', msg: '', rendered: '' });
  t.match(r.render_nothing, { result: 'error', code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'content' argument" });

  // The realm's default delete_own_message_policy is administrators only, as Zulip's.
  t.match(r.delete_by_member, { result: 'error', code: 'BAD_REQUEST', msg: "You don't have permission to delete this message" });
  t.match(r.delete_again, { result: 'error', code: 'BAD_REQUEST', msg: 'Invalid message(s)' });
  t.match(r.after_delete, { result: 'error', code: 'BAD_REQUEST', msg: 'Invalid message(s)' });
});
