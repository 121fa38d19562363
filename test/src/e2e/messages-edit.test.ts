/**
 * PATCH /messages/{message_id} (spec 4.14) end to end: every rule and error with status,
 * code and msg (and that a refused edit changed nothing), edit history (spec 2.3) in
 * GET /messages, GET /messages/{id} and GET /messages/{id}/history, content flags recomputed
 * after an edit, topic edits with each propagate_mode, resolving, stream moves with their
 * notification-bot posts and lost access, and the update_message / delete_message events
 * written to the outbox. Streams are set up through the real POST /users/me/subscriptions.
 */
import t, { type Test } from 'tap';
import { createPool } from '@zc/shared/db';
import { startSystem, type Account, type System } from '../harness.js';
import { messagesWorld, type MessagesWorld, type Msg } from './messages-fixtures.js';

async function streamWith(sys: System, w: MessagesWorld, name: string, people: Account[], o: { invite_only?: boolean } = {}): Promise<number> {
  const [first] = people;
  const r = await sys.client(first as Account).post('/users/me/subscriptions', {
    subscriptions: [{ name }],
    principals: people.map((p) => p.user_id),
    ...(o.invite_only ? { invite_only: true } : {}),
  });
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  const id = (await sys.client(first as Account).get('/get_stream_id', { stream: name })).body.stream_id as number;
  await sys.flushOutboxes();
  for (const p of people) await w.until('SELECT 1 FROM messages.subscriber WHERE stream_id = $1 AND user_id = $2', [id, p.user_id]);
  return id;
}

t.test('messages: editing and moving', async (t) => {
  const sys = await startSystem(t);
  const w = messagesWorld(sys, t);
  const db = createPool(sys.env.databaseUrl, { max: 1 });
  t.teardown(() => db.end());
  const { hamlet, othello, iago, desdemona, polonius } = sys.people;
  const everyone = [hamlet, othello, iago, desdemona];
  const verona = await streamWith(sys, w, 'Verona', everyone);
  const denmark = await streamWith(sys, w, 'Denmark', everyone);
  const secret = await streamWith(sys, w, 'Secret', [desdemona, hamlet], { invite_only: true });

  const send = async (who: Account, params: Record<string, unknown>) => {
    const r = await sys.client(who).post('/messages', params as never);
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
    return r.body.id as number;
  };
  const toVerona = (who: Account, topic: string, content: string) => send(who, { type: 'stream', to: 'Verona', topic, content });
  const patch = (who: Account, id: number | string, params: Record<string, unknown>) => sys.client(who).patch(`/messages/${id}`, params as never);
  const fetchAs = async (who: Account, id: number) => {
    const r = await sys.client(who).get('/messages', { anchor: id, num_before: 0, num_after: 0, narrow: [['id', String(id)]] });
    return (r.body.messages as Msg[])[0];
  };
  const topicMessages = async (who: Account, stream: string, topic: string) =>
    (await sys.client(who).get('/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow: [['stream', stream], ['topic', topic]] } as never)).body.messages as Msg[];
  const updateEvents = async (messageId: number) => (await w.notifications()).filter((n) => n.event.type === 'update_message' && n.event.message_id === messageId);
  const expectError = async (t: Test, r: { status: number; body: Msg }, msg: string) => {
    t.equal(r.status, 400, msg);
    t.same(r.body, { result: 'error', msg, code: 'BAD_REQUEST' });
  };

  t.test('a content edit re-renders and records history', async (t) => {
    const id = await toVerona(hamlet, 'edits', 'first **draft**');
    const before = await fetchAs(othello, id);
    t.notOk('edit_history' in (before as Msg), 'no edit_history before an edit');
    t.notOk('last_edit_timestamp' in (before as Msg));
    const r = await patch(hamlet, id, { content: 'second *draft*' });
    t.equal(r.status, 200);
    t.same(r.body, { result: 'success', msg: '' });
    const m = await fetchAs(othello, id);
    t.equal(m?.content, '<p>second <em>draft</em></p>');
    t.type(m?.last_edit_timestamp, 'number');
    t.same(m?.edit_history, [
      { user_id: hamlet.user_id, timestamp: m?.last_edit_timestamp, prev_content: 'first **draft**', prev_rendered_content: '<p>first <strong>draft</strong></p>', prev_rendered_content_version: 1 },
    ]);
    await patch(hamlet, id, { content: 'third' });
    const again = (await sys.client(othello).get(`/messages/${id}`)).body as Msg;
    t.equal(again.raw_content, 'third');
    t.same(
      again.message.edit_history.map((e: Msg) => e.prev_content),
      ['second *draft*', 'first **draft**'],
      'newest first, in GET /messages/{id} too',
    );
    const history = await sys.client(othello).get(`/messages/${id}/history`);
    t.equal(history.status, 200);
    const snaps = history.body.message_history as Msg[];
    t.same(snaps.map((s) => s.content), ['first **draft**', 'second *draft*', 'third'], 'message_history is oldest first');
    t.same(snaps.map((s) => s.topic), ['edits', 'edits', 'edits']);
    t.same(snaps.map((s) => s.user_id), [hamlet.user_id, hamlet.user_id, hamlet.user_id]);
    t.notOk('prev_content' in (snaps[0] as Msg), 'the original has no prev_content');
    t.equal(snaps[2]?.prev_content, 'second *draft*');
    t.equal(snaps[2]?.prev_rendered_content, '<p>second <em>draft</em></p>');
    t.match(snaps[2]?.content_html_diff, /highlight_text_inserted/);
  });

  t.test('content limits: emptied content becomes "(deleted)", over 10000 bytes is truncated', async (t) => {
    const id = await toVerona(hamlet, 'limits', 'soon gone');
    t.equal((await patch(hamlet, id, { content: '   ' })).status, 200);
    t.equal((await fetchAs(hamlet, id))?.content, '<p>(deleted)</p>');
    t.equal((await patch(hamlet, id, { content: 'x'.repeat(10_050) })).status, 200);
    const raw = (await sys.client(hamlet).get(`/messages/${id}`)).body.raw_content as string;
    t.ok(Buffer.byteLength(raw) <= 10_000, 'at most 10000 bytes');
    t.ok(raw.endsWith('[message truncated]'));
  });

  t.test('every refused edit: status, code, msg, and nothing changed', async (t) => {
    const id = await toVerona(hamlet, 'rules', 'original');
    const dm = await send(hamlet, { type: 'private', to: JSON.stringify([othello.user_id]), content: 'a dm' });
    const secretMsg = await send(hamlet, { type: 'stream', to: 'Secret', topic: 'hidden', content: 'psst' });
    await expectError(t, await patch(othello, id, { content: 'hijacked' }), "You don't have permission to edit this message");
    await expectError(t, await patch(desdemona, id, { content: 'admin edit' }), "You don't have permission to edit this message");
    await expectError(t, await patch(hamlet, id, {}), 'Nothing to change');
    await expectError(t, await patch(hamlet, id, { topic: 'rules' }), 'Nothing to change');
    await expectError(t, await patch(hamlet, id, { content: 'x', stream_id: denmark }), 'Cannot change message content while changing channel');
    await expectError(t, await patch(hamlet, dm, { topic: 'a topic' }), 'Direct messages cannot have topics.');
    await expectError(t, await patch(hamlet, dm, { stream_id: verona }), 'Direct messages cannot be moved to channels.');
    await expectError(t, await patch(hamlet, id, { content: 'x', propagate_mode: 'change_all' }), 'Invalid propagate_mode without topic edit');
    await expectError(t, await patch(hamlet, id, { topic: 'y', propagate_mode: 'change_some' }), 'Invalid propagate_mode');
    await expectError(t, await patch(hamlet, id, { topic: '   ' }), "Topic can't be empty");
    await expectError(t, await patch(hamlet, id, { stream_id: denmark }), "You don't have permission to move this message");
    await expectError(t, await patch(desdemona, id, { stream_id: 999999 }), 'Invalid channel ID');
    await expectError(t, await patch(othello, id, { stream_id: secret }), "You don't have permission to move this message");
    await expectError(t, await patch(iago, id, { stream_id: secret }), 'Invalid channel ID');
    await expectError(t, await patch(hamlet, 999999, { content: 'x' }), 'Invalid message(s)');
    await expectError(t, await patch(hamlet, 'abc', { content: 'x' }), 'Invalid message(s)');
    await expectError(t, await patch(othello, secretMsg, { topic: 'peek' }), 'Invalid message(s)');
    await expectError(t, await patch(polonius, id, { topic: 'guest' }), 'Invalid message(s)');
    await expectError(t, await patch(iago, dm, { content: 'x' }), 'Invalid message(s)');

    // Past the realm's limit (600 s, plus Zulip's 20 s of grace) even the sender cannot edit content.
    await db.query("UPDATE messages.message SET date_sent = now() - interval '700 seconds' WHERE id = $1", [id]);
    await expectError(t, await patch(hamlet, id, { content: 'late' }), 'The time limit for editing this message has passed');
    t.equal((await patch(hamlet, id, { topic: 'late topic' })).status, 200, 'the sender may still change the topic');
    // Other people's topics: 3 days for non-moderators.
    await db.query("UPDATE messages.message SET date_sent = now() - interval '4 days' WHERE id = $1", [id]);
    await expectError(t, await patch(othello, id, { topic: 'too late' }), "The time limit for editing this message's topic has passed");
    t.equal((await patch(desdemona, id, { topic: 'admins may' })).status, 200, 'administrators have no topic limit');

    const m = (await sys.client(hamlet).get(`/messages/${id}`)).body as Msg;
    t.equal(m.raw_content, 'original', 'the refused content edits changed nothing');
    t.same(m.message.edit_history.map((e: Msg) => e.topic), ['admins may', 'late topic'], 'only the allowed edits are in the history');
    t.equal(((await sys.client(hamlet).get(`/messages/${dm}`)).body as Msg).message.subject, '');

    t.equal((await patch(hamlet, dm, { content: 'an edited dm' })).status, 200, 'direct messages take content edits');
    const [dmEvent] = await updateEvents(dm);
    t.notOk('stream_id' in (dmEvent?.event ?? {}) || 'stream_name' in (dmEvent?.event ?? {}), 'no stream fields for a direct message');
    t.same((dmEvent?.users as Msg[]).map((u) => u.id).sort(), [hamlet.user_id, othello.user_id].sort());
    t.equal((await fetchAs(othello, dm))?.content, '<p>an edited dm</p>');
  });

  t.test('flags follow the edited content for every recipient', async (t) => {
    await sys.client(iago).post('/users/me/alert_words', { alert_words: ['dragon'] });
    await sys.flushOutboxes();
    await w.until('SELECT 1 FROM messages.alert_words WHERE user_id = $1', [iago.user_id]);
    const id = await toVerona(hamlet, 'flags', 'hi @**Othello, the Moor of Venice**');
    await sys.client(othello).post('/messages/flags', { messages: [id], op: 'add', flag: 'starred' });
    t.same((await fetchAs(othello, id))?.flags, ['starred', 'mentioned']);
    const before = (await updateEvents(id)).length;

    t.equal((await patch(hamlet, id, { content: 'hi @**Iago**, a dragon!' })).status, 200);
    t.same((await fetchAs(othello, id))?.flags, ['starred'], 'the mention is gone; starred stays');
    t.same((await fetchAs(iago, id))?.flags, ['mentioned', 'has_alert_word']);
    t.same((await fetchAs(desdemona, id))?.flags, []);

    const [event] = (await updateEvents(id)).slice(before);
    const ts = event?.event.edit_timestamp;
    t.type(ts, 'number');
    t.same(event?.event, {
      type: 'update_message',
      user_id: hamlet.user_id,
      rendering_only: false,
      message_id: id,
      message_ids: [id],
      edit_timestamp: ts,
      stream_name: 'Verona',
      stream_id: verona,
      orig_content: 'hi @**Othello, the Moor of Venice**',
      orig_rendered_content: `<p>hi <span class="user-mention" data-user-id="${othello.user_id}">@Othello, the Moor of Venice</span></p>`,
      content: 'hi @**Iago**, a dragon!',
      rendered_content: `<p>hi <span class="user-mention" data-user-id="${iago.user_id}">@Iago</span>, a dragon!</p>`,
      prev_rendered_content_version: 1,
      is_me_message: false,
    });
    const users = new Map((event?.users as Msg[]).map((u) => [u.id, u.flags]));
    t.same(users.get(othello.user_id), ['starred']);
    t.same(users.get(iago.user_id), ['mentioned', 'has_alert_word']);
    t.same(users.get(hamlet.user_id), (await fetchAs(hamlet, id))?.flags, "the sender's own flags");
    t.equal(users.size, 4, 'every recipient, once');

    t.equal((await patch(hamlet, id, { content: '@**all** and @_**Othello, the Moor of Venice|' + othello.user_id + '**' })).status, 200);
    for (const who of everyone) t.ok((await fetchAs(who, id))?.flags.includes('wildcard_mentioned'), `${who.full_name} wildcard_mentioned`);
    t.notOk((await fetchAs(othello, id))?.flags.includes('mentioned'), 'a silent mention adds no flag');
    t.notOk((await fetchAs(iago, id))?.flags.includes('has_alert_word'), 'the alert word is gone');
  });

  t.test('topic edits: change_one, change_later, change_all, with history and events', async (t) => {
    const a = await toVerona(hamlet, 'plans', 'one');
    const b = await toVerona(othello, 'plans', 'two');
    const c = await toVerona(hamlet, 'Plans', 'three');
    const d = await toVerona(iago, 'plans', 'four');

    t.equal((await patch(othello, a, { topic: 'only a', send_notification_to_new_thread: false })).status, 200, "a member may retitle someone else's message (edit_topic_policy: everyone)");
    t.same((await topicMessages(hamlet, 'Verona', 'only a')).map((m) => m.id), [a]);
    const [ev] = await updateEvents(a);
    t.same(ev?.event, {
      type: 'update_message',
      user_id: othello.user_id,
      rendering_only: false,
      message_id: a,
      message_ids: [a],
      edit_timestamp: ev?.event.edit_timestamp,
      stream_name: 'Verona',
      stream_id: verona,
      orig_subject: 'plans',
      propagate_mode: 'change_one',
      subject: 'only a',
      topic_links: [],
    });
    t.same((await fetchAs(hamlet, a))?.edit_history, [{ user_id: othello.user_id, timestamp: ev?.event.edit_timestamp, prev_topic: 'plans', topic: 'only a' }]);

    t.equal((await patch(hamlet, c, { topic: 'later', propagate_mode: 'change_later', send_notification_to_new_thread: false })).status, 200);
    t.same((await topicMessages(hamlet, 'Verona', 'later')).map((m) => m.id), [c, d], 'this one and the following, whatever the case of the topic');
    t.same((await topicMessages(hamlet, 'Verona', 'plans')).map((m) => m.id), [b]);
    const [later] = await updateEvents(c);
    t.same(later?.event.message_ids, [c, d]);
    t.equal(later?.event.propagate_mode, 'change_later');
    t.same((await fetchAs(hamlet, c))?.edit_history[0].prev_topic, 'Plans', 'each message keeps its own previous topic');

    t.equal((await patch(hamlet, d, { topic: 'all of it', propagate_mode: 'change_all', send_notification_to_new_thread: false })).status, 200);
    t.same((await topicMessages(hamlet, 'Verona', 'all of it')).map((m) => m.id), [c, d]);
    const history = (await sys.client(hamlet).get(`/messages/${c}/history`)).body.message_history as Msg[];
    t.same(history.map((s) => s.topic), ['Plans', 'later', 'all of it']);
    t.same(history.map((s) => s.prev_topic), [undefined, 'Plans', 'later']);
  });

  t.test('topic_links of an edited topic come from the linkifiers', async (t) => {
    const created = await sys.client(desdemona).post('/realm/filters', { pattern: 'T-(?P<id>[0-9]+)', url_template: 'https://t.example/{id}' });
    t.equal(created.status, 200);
    await sys.flushOutboxes();
    await w.until("SELECT 1 FROM messages.realm_linkifiers WHERE linkifiers::text LIKE '%t.example%'", []);
    const id = await toVerona(hamlet, 'tickets', 'see');
    t.equal((await patch(hamlet, id, { topic: 'fix T-9', send_notification_to_new_thread: false })).status, 200);
    const [ev] = await updateEvents(id);
    t.same(ev?.event.topic_links, [{ text: 'T-9', url: 'https://t.example/9' }]);
    t.same((await fetchAs(othello, id))?.topic_links, [{ text: 'T-9', url: 'https://t.example/9' }]);
    await sys.client(desdemona).delete(`/realm/filters/${created.body.id}`);
  });

  t.test('resolving a topic posts only the resolve notice', async (t) => {
    const a = await toVerona(hamlet, 'bug', 'broken');
    const b = await toVerona(othello, 'bug', 'fixed');
    t.equal((await patch(othello, b, { topic: '✔ bug', propagate_mode: 'change_all' })).status, 200);
    const resolved = await topicMessages(hamlet, 'Verona', '✔ bug');
    t.same(resolved.slice(0, 2).map((m) => m.id), [a, b]);
    t.equal(resolved.length, 3, 'one notification-bot message');
    t.equal(resolved[2]?.sender_email.startsWith('notification-bot@'), true);
    t.match(resolved[2]?.content, `has marked this topic as resolved.`);
    t.match(resolved[2]?.content, `data-user-id="${othello.user_id}"`);
    t.same(await topicMessages(hamlet, 'Verona', 'bug'), [], 'nothing left in the old topic, and no breadcrumb there');
    t.equal((await patch(othello, b, { topic: 'bug', propagate_mode: 'change_all' })).status, 200);
    t.match((await topicMessages(hamlet, 'Verona', 'bug')).at(-1)?.content, 'has marked this topic as unresolved.');
  });

  t.test('moving between streams: history, events, breadcrumbs', async (t) => {
    const a = await toVerona(hamlet, 'voyage', 'we sail');
    const b = await toVerona(othello, 'voyage', 'to England');
    const r = await patch(desdemona, a, { stream_id: denmark, propagate_mode: 'change_all', send_notification_to_old_thread: true });
    t.equal(r.status, 200);
    const moved = await topicMessages(hamlet, 'Denmark', 'voyage');
    t.same(moved.slice(0, 2).map((m) => m.id), [a, b]);
    t.same(moved.slice(0, 2).map((m) => m.stream_id), [denmark, denmark]);
    t.equal(moved[0]?.display_recipient, 'Denmark');
    t.match(moved[2]?.content, 'This topic was moved here from', 'a breadcrumb in the new topic');
    const old = await topicMessages(hamlet, 'Verona', 'voyage');
    t.equal(old.length, 1, 'only the breadcrumb is left behind');
    t.match(old[0]?.content, 'This topic was moved to');
    t.match(old[0]?.content, `data-stream-id="${denmark}"`);
    const [ev] = await updateEvents(a);
    t.same(ev?.event, {
      type: 'update_message',
      user_id: desdemona.user_id,
      rendering_only: false,
      message_id: a,
      message_ids: [a, b],
      edit_timestamp: ev?.event.edit_timestamp,
      stream_name: 'Verona',
      stream_id: verona,
      orig_subject: 'voyage',
      propagate_mode: 'change_all',
      new_stream_id: denmark,
    });
    t.same((await fetchAs(hamlet, b))?.edit_history, [{ user_id: desdemona.user_id, timestamp: ev?.event.edit_timestamp, prev_stream: verona, stream: denmark }]);
    const history = (await sys.client(hamlet).get(`/messages/${a}/history`)).body.message_history as Msg[];
    t.match(history[1], { prev_stream: verona, stream: denmark, topic: 'voyage' });
  });

  t.test('a move to a private stream takes the messages away from those who cannot see it', async (t) => {
    const a = await toVerona(hamlet, 'confidential', 'for few eyes');
    t.ok(await fetchAs(othello, a));
    const r = await patch(desdemona, a, { stream_id: secret, topic: 'classified', send_notification_to_new_thread: false });
    t.equal(r.status, 200);
    t.equal(await fetchAs(othello, a), undefined, 'Othello lost it');
    t.equal((await sys.client(othello).get(`/messages/${a}`)).body.msg, 'Invalid message(s)');
    t.equal((await fetchAs(hamlet, a))?.subject, 'classified', 'a subscriber keeps it');
    const deletes = (await w.notifications()).filter((n) => n.event.type === 'delete_message' && n.event.message_ids?.includes(a));
    t.same(deletes[0]?.event, { type: 'delete_message', message_type: 'stream', message_ids: [a], stream_id: verona, topic: 'confidential' });
    t.same([...(deletes[0]?.users as number[])].sort(), [othello.user_id, iago.user_id].sort());
    const [ev] = await updateEvents(a);
    t.same((ev?.users as Msg[]).map((u) => u.id).sort(), [hamlet.user_id, desdemona.user_id].sort(), 'the update goes to those who still see it');
    t.equal(ev?.event.subject, 'classified');
    t.equal(ev?.event.new_stream_id, secret);
  });
});
