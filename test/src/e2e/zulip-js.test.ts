/**
 * zulip-js (the Zulip project's JavaScript bindings, from npm, unmodified) against a running
 * system: the calls a bot or script makes — its profile, subscribing, listing streams and
 * subscriptions, sending, fetching with a narrow, editing, rendering, flags, reactions
 * (reactions.add/remove and messages.deleteReactionById), a stream's topics, deleting a
 * message and archiving a stream — and a reaction reaching another user's event queue
 * through queues.register and events.retrieve. zulip-js answers the server's JSON for errors
 * too, so each refusal is checked as the client hands it over. It sends POST bodies as
 * multipart forms and PATCH/DELETE parameters in the query string.
 */
import t from 'tap';
import zulip, { type ZulipClient } from 'zulip-js';
import type { Account } from '../harness.js';
import { startSystem } from '../harness.js';

type Body = Record<string, unknown>;
type Msg = { id: number; content: string; subject: string; reactions: Array<{ emoji_name: string; emoji_code: string; reaction_type: string; user_id: number }> };

t.test('zulip-js', async (t) => {
  const sys = await startSystem(t);
  const { hamlet, othello, desdemona } = sys.people;
  const connect = (a: Account) => zulip({ username: a.email, apiKey: a.api_key, realm: sys.baseUrl });
  const [h, o, admin] = await Promise.all([connect(hamlet), connect(othello), connect(desdemona)]);
  const ok = async (reply: Promise<Body>): Promise<Body> => {
    const body = await reply;
    if (body.result !== 'success') throw new Error(JSON.stringify(body));
    return body;
  };
  const refusal = (msg: string, code = 'BAD_REQUEST') => ({ result: 'error', msg, code });
  const fetchOne = async (c: ZulipClient, id: number) =>
    ((await ok(c.messages.retrieve({ anchor: id, num_before: 0, num_after: 0, narrow: [{ operator: 'id', operand: id }] }))).messages as Msg[])[0];

  let verona = 0;
  t.test('profile, subscribing, streams and subscriptions', async (t) => {
    t.match(await h.users.me.getProfile(), { result: 'success', user_id: hamlet.user_id, email: hamlet.email, full_name: hamlet.full_name });
    const sub = await ok(h.users.me.subscriptions.add({ subscriptions: [{ name: 'Verona', description: 'Fair Verona' }], principals: [hamlet.user_id, othello.user_id] }));
    t.same(sub.subscribed, { [hamlet.email]: ['Verona'], [othello.email]: ['Verona'] });
    verona = (await ok(h.streams.getStreamId('Verona'))).stream_id as number;
    t.same(await h.streams.getStreamId('Mantua'), refusal("Invalid channel name 'Mantua'"));
    const streams = (await ok(o.streams.retrieve())).streams as Body[];
    t.match(streams.find((s) => s.stream_id === verona), { name: 'Verona', description: 'Fair Verona', invite_only: false });
    const subs = (await ok(o.streams.subscriptions.retrieve())).subscriptions as Body[];
    t.match(subs.find((s) => s.stream_id === verona), { name: 'Verona', description: 'Fair Verona' });
    t.match(await h.users.me.subscriptions.add({ subscriptions: [{ name: 'Verona' }], principals: ['nobody@zulip.test'] }), refusal("User not authorized to execute queries on behalf of 'nobody@zulip.test'", 'UNAUTHORIZED_PRINCIPAL'));
  });

  let sent = 0;
  t.test('messages: send, retrieve with a narrow, update, render, flags, getById', async (t) => {
    sent = (await ok(h.messages.send({ type: 'stream', to: 'Verona', topic: 'balcony', content: 'But soft, what light' }))).id as number;
    t.match(await fetchOne(o, sent), { id: sent, subject: 'balcony', content: '<p>But soft, what light</p>', reactions: [] });
    const narrowed = await ok(o.messages.retrieve({ anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'stream', operand: 'Verona' }, { operator: 'topic', operand: 'balcony' }] }));
    t.same((narrowed.messages as Msg[]).map((m) => m.id), [sent]);
    t.match(await ok(h.messages.update({ message_id: sent, content: 'But soft, what light through yonder window' })), { result: 'success' });
    t.match(await ok(o.messages.getById({ message_id: sent })), { message: { id: sent, content: '<p>But soft, what light through yonder window</p>' } });
    t.same(await o.messages.update({ message_id: sent, content: 'not mine' }), refusal("You don't have permission to edit this message"));
    t.match(await ok(h.messages.render('**breaks**')), { rendered: '<p><strong>breaks</strong></p>' });
    t.match(await ok(o.messages.flags.add({ messages: [sent], flag: 'starred' })), { messages: [sent] });
    t.match(await o.messages.getById({ message_id: sent }), { message: { flags: ['starred'] } }, 'starred, still unread');
    const dm = await ok(h.messages.send({ type: 'private', to: [othello.user_id], content: 'a word' }));
    t.match(await o.messages.getById({ message_id: dm.id as number }), { message: { type: 'private', content: '<p>a word</p>' } });
    t.same(await o.messages.getById({ message_id: 99999999 }), refusal('Invalid message(s)'));
  });

  t.test('reactions: add, remove, deleteReactionById, and the event in another queue', async (t) => {
    const queue = await ok(o.queues.register({ event_types: ['reaction'] }));
    t.same(await ok(h.reactions.add({ message_id: sent, emoji_name: 'octopus' })), { result: 'success', msg: '' });
    t.same(await ok(o.reactions.add({ message_id: sent, emoji_name: 'joy', emoji_code: '1f602', reaction_type: 'unicode_emoji' })), { result: 'success', msg: '' });
    t.same(await h.reactions.add({ message_id: sent, emoji_name: 'octopus' }), refusal('Reaction already exists.', 'REACTION_ALREADY_EXISTS'));
    t.same(await h.reactions.add({ message_id: sent, emoji_name: 'no_such_emoji' }), refusal("Emoji 'no_such_emoji' does not exist"));
    t.same(await h.reactions.add({ message_id: 99999999, emoji_name: 'octopus' }), refusal('Invalid message(s)'));
    t.same(
      (await fetchOne(o, sent))?.reactions.map((r) => [r.emoji_name, r.emoji_code, r.reaction_type, r.user_id]),
      [
        ['octopus', '1f419', 'unicode_emoji', hamlet.user_id],
        ['joy', '1f602', 'unicode_emoji', othello.user_id],
      ],
    );
    const events = await ok(o.events.retrieve({ queue_id: queue.queue_id, last_event_id: queue.last_event_id }));
    t.match(events.events, [{ type: 'reaction', op: 'add', message_id: sent, user_id: hamlet.user_id, emoji_name: 'octopus', emoji_code: '1f419', reaction_type: 'unicode_emoji' }]);

    t.same(await ok(h.reactions.remove({ message_id: sent, emoji_name: 'octopus' })), { result: 'success', msg: '' });
    t.same(await h.reactions.remove({ message_id: sent, emoji_name: 'octopus' }), refusal("Reaction doesn't exist.", 'REACTION_DOES_NOT_EXIST'));
    // deleteReactionById also puts message_id in the query string, where the server names it as ignored (as Zulip).
    t.same(await ok(o.messages.deleteReactionById({ message_id: sent, emoji_code: '1f602', reaction_type: 'unicode_emoji' })), { result: 'success', msg: '', ignored_parameters_unsupported: ['message_id'] });
    t.same((await fetchOne(h, sent))?.reactions, []);
    t.same(await o.reactions.remove({ message_id: sent }), refusal('At least one of the following arguments must be present: emoji_name, emoji_code'));
  });

  t.test("a stream's topics, newest first", async (t) => {
    await ok(h.messages.send({ type: 'stream', to: 'Verona', topic: 'orchard', content: 'the orchard walls are high' }));
    const last = (await ok(o.messages.send({ type: 'stream', to: 'Verona', topic: 'balcony', content: 'Romeo, Romeo' }))).id as number;
    const topics = (await ok(o.streams.topics.retrieve({ stream_id: verona }))).topics as Array<{ name: string; max_id: number }>;
    t.same(topics.map((x) => x.name), ['balcony', 'orchard']);
    t.equal(topics[0]?.max_id, last);
    t.same(await o.streams.topics.retrieve({ stream_id: 999999 }), refusal('Invalid channel ID'));
    // zulip-js's form-data cannot carry a boolean: its users pass 'true', as JSON.
    await ok(admin.users.me.subscriptions.add({ subscriptions: [{ name: 'Crypt' }], invite_only: 'true' }));
    const crypt = (await ok(admin.streams.getStreamId('Crypt'))).stream_id as number;
    t.same(await o.streams.topics.retrieve({ stream_id: crypt }), refusal('Invalid channel ID'), 'a private stream one is not in');
  });

  t.test('deleting a message and archiving a stream', async (t) => {
    t.same(await h.messages.deleteById({ message_id: sent }), refusal("You don't have permission to delete this message"), 'the default policy: administrators only');
    t.match(await ok(admin.messages.deleteById({ message_id: sent })), { result: 'success' });
    t.same(await h.messages.getById({ message_id: sent }), refusal('Invalid message(s)'));
    t.same(await admin.messages.deleteById({ message_id: sent }), refusal('Invalid message(s)'));
    t.same(await h.streams.deleteById({ stream_id: verona }), refusal('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'));
    t.match(await ok(admin.streams.deleteById({ stream_id: verona })), { result: 'success' });
    t.same(await h.streams.getStreamId('Verona'), refusal("Invalid channel name 'Verona'"));
    t.notOk(((await ok(h.streams.subscriptions.retrieve())).subscriptions as Body[]).some((s) => s.stream_id === verona), 'no longer among the subscriptions');
    t.same((await ok(h.emojis.retrieve())).emoji, {}, 'GET /realm/emoji of a realm without custom emoji');
  });
});
