/**
 * PATCH /streams/{stream_id} end to end: Zulip's permission rules and errors (code, status,
 * msg), the `stream` update events (checked with the apply-events check), the notification
 * bot's notices in "stream events", and a rename taking effect for senders at once.
 */
import t, { type Test } from 'tap';
import { Role } from '@zc/shared/contracts';
import { createPool } from '@zc/shared/db';
import { systemGroupId } from '@zc/shared/policy';
import type { Params } from '../client.js';
import { startSystem, type Account } from '../harness.js';
import { verifyAction } from './events-verify.js';
import type { Msg } from './messages-fixtures.js';

t.test('PATCH /streams/{stream_id}', async (t) => {
  const sys = await startSystem(t);
  const { hamlet, othello, iago, desdemona, polonius } = sys.people;
  const db = createPool(sys.env.databaseUrl, { max: 1 });
  t.teardown(() => db.end());
  const ok = async (r: Promise<{ status: number; body: Msg }>) => {
    const res = await r;
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    return res.body;
  };
  const idOf = async (name: string, who: Account = iago) => (await ok(sys.client(who).get('/get_stream_id', { stream: name }))).stream_id as number;
  const expectError = (t: Test, r: { status: number; body: Msg }, msg: string, code = 'BAD_REQUEST') => {
    t.equal(r.status, 400, msg);
    t.same(r.body, { result: 'error', msg, code });
  };
  const patch = (who: Account, id: number, p: Params) => sys.client(who).patch(`/streams/${id}`, p);
  /**
   * Posts the stream's first message and waits for first_message_id: our feature level sends
   * no event when it changes (Zulip 9.0 does), so the notices posted by the changes under
   * test must not be the stream's first message, or /register would differ from the events.
   */
  const firstMessage = async (streamId: number) => {
    await ok(sys.client(hamlet).post('/messages', { type: 'stream', to: streamId, topic: 'first', content: 'first' }));
    for (let i = 0; i < 200; i++) {
      await sys.flushOutboxes();
      if ((await ok(sys.client(hamlet).get(`/streams/${streamId}`))).stream.first_message_id !== null) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error('first_message_id never set');
  };
  /** The raw text of the notification bot's notices in the stream's "stream events" topic, oldest first. */
  const notices = async (who: Account, streamId: number): Promise<string[]> => {
    for (let i = 0; i < 100; i++) {
      await sys.flushOutboxes();
      const body = await ok(
        sys.client(who).get('/messages', {
          anchor: 'newest',
          num_before: 50,
          num_after: 0,
          apply_markdown: false,
          narrow: [
            { operator: 'stream', operand: streamId },
            { operator: 'topic', operand: 'stream events' },
          ],
        }),
      );
      const list = (body.messages as Msg[]).map((m) => m.content as string);
      if (list.length > 0) return list;
      await new Promise((r) => setTimeout(r, 30));
    }
    return [];
  };

  await ok(sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Verona', description: 'Fair' }], principals: [hamlet.user_id, othello.user_id] }));
  await ok(sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Hideout' }], principals: [hamlet.user_id, polonius.user_id], invite_only: true }));
  const verona = await idOf('Verona');
  const hideout = await idOf('Hideout', hamlet);

  t.test('permissions and errors', async (t) => {
    expectError(t, await patch(hamlet, verona, { description: 'mine' }), 'Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
    expectError(t, await patch(othello, hideout, { description: 'x' }), 'Invalid channel ID');
    expectError(t, await patch(hamlet, hideout, { description: 'x' }), 'Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
    expectError(t, await patch(desdemona, 999999, { description: 'x' }), 'Invalid channel ID');
    expectError(t, await patch(desdemona, verona, { new_name: 'Verona' }), 'Channel already has that name!');
    expectError(t, await patch(desdemona, verona, { new_name: '   ' }), "Channel name can't be empty.");
    expectError(t, await patch(desdemona, verona, { new_name: 'x'.repeat(61) }), 'Channel name too long (limit: 60 characters).');
    expectError(t, await patch(desdemona, verona, { new_name: 'hideout' }), "Channel name 'hideout' is already taken.");
    const long = await patch(desdemona, verona, { description: 'd'.repeat(1025) });
    t.equal(long.status, 400);
    t.equal(long.body.msg, 'description is too long (limit: 1024 characters)');
    expectError(t, await patch(desdemona, verona, { history_public_to_subscribers: false }), 'Invalid parameters');
    expectError(t, await patch(desdemona, verona, { is_web_public: true, is_private: true }), 'Invalid parameters');
    expectError(t, await patch(desdemona, verona, { is_web_public: true }), 'Web-public channels are not enabled.');
    expectError(t, await patch(desdemona, verona, { stream_post_policy: 9 }), 'Invalid stream_post_policy');
    expectError(t, await patch(desdemona, verona, { message_retention_days: 30 }), 'Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL');
    t.same((await patch(iago, verona, { message_retention_days: 'bogus' })).body, {
      result: 'error',
      msg: "Bad value for 'message_retention_days': bogus",
      code: 'REQUEST_VARIABLE_INVALID',
      var_name: 'message_retention_days',
      bad_value: 'bogus',
    });
    // Administrators change a private stream's name and description, but not its access settings, unless subscribed.
    expectError(t, await patch(desdemona, hideout, { is_private: false }), 'Invalid channel ID');
    expectError(t, await patch(desdemona, hideout, { can_remove_subscribers_group_id: systemGroupId(sys.realmId, 'role:members') }), 'Invalid channel ID');
    await ok(patch(desdemona, hideout, { description: 'Behind the arras' }));
    expectError(t, await patch(desdemona, verona, { can_remove_subscribers_group_id: 999999 }), 'Invalid user group');
    expectError(t, await patch(desdemona, verona, { can_remove_subscribers_group: systemGroupId(sys.realmId, 'role:owners') }), "'can_remove_subscribers_group' setting cannot be set to 'role:owners' group.");
    await ok(sys.client(desdemona).post('/user_groups/create', { name: 'Players', description: 'the troupe', members: [hamlet.user_id] }));
    const groups = (await ok(sys.client(desdemona).get('/user_groups'))).user_groups as Msg[];
    const players = groups.find((g) => g.name === 'Players') as Msg;
    expectError(t, await patch(desdemona, verona, { can_remove_subscribers_group_id: players.id }), "'can_remove_subscribers_group' must be a system user group.");
    // A default stream cannot be made private.
    await ok(sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Lobby' }] }));
    const lobby = await idOf('Lobby');
    await db.query('INSERT INTO subscriptions.default_stream (realm_id, stream_id) VALUES ($1, $2)', [sys.realmId, lobby]);
    expectError(t, await patch(desdemona, lobby, { is_private: true }), 'Default streams cannot be made private.');
    // A refused request changes nothing, not even the settings it named that were fine.
    expectError(t, await patch(desdemona, verona, { description: 'changed?', new_name: 'hideout' }), "Channel name 'hideout' is already taken.");
    t.equal((await ok(sys.client(hamlet).get(`/streams/${verona}`))).stream.description, 'Fair');
    t.same(await ok(patch(desdemona, verona, {})), { result: 'success', msg: '' }, 'nothing asked, nothing changed');
  });

  t.test('events of each setting pass the apply-events check', async (t) => {
    const params = { event_types: ['stream', 'subscription'], apply_markdown: true, client_gravatar: false };
    const h = sys.client(hamlet);
    await firstMessage(verona);
    await verifyAction(t, sys, h, () => ok(patch(desdemona, verona, { description: 'Fair **Verona**' })), { params, expect: ['stream/update'] });
    const stream = (await ok(h.get(`/streams/${verona}`))).stream as Msg;
    t.equal(stream.rendered_description, '<p>Fair <strong>Verona</strong></p>', 'the description is rendered as Markdown');
    const renamed = await verifyAction(t, sys, h, () => ok(patch(desdemona, verona, { new_name: 'Fair Verona' })), { params, expect: ['stream/update'] });
    t.same(renamed.map((e) => [e.property, e.name]), [['email_address', 'Verona'], ['name', 'Verona']], 'the address, then the name, keyed by the old name');
    await verifyAction(t, sys, h, () => ok(patch(desdemona, verona, { stream_post_policy: 2 })), { params, expect: ['stream/update'] });
    await verifyAction(t, sys, sys.client(othello), () => ok(patch(desdemona, verona, { is_announcement_only: false })), { params, expect: ['stream/update'] });
    await verifyAction(t, sys, h, () => ok(patch(iago, verona, { message_retention_days: 30 })), { params, expect: ['stream/update'] });
    await verifyAction(t, sys, h, () => ok(patch(desdemona, verona, { can_remove_subscribers_group_id: systemGroupId(sys.realmId, 'role:members') })), {
      params,
      expect: ['stream/update'],
    });
    const after = (await ok(h.get(`/streams/${verona}`))).stream as Msg;
    t.match(after, { name: 'Fair Verona', stream_post_policy: 1, is_announcement_only: false, message_retention_days: 30, can_remove_subscribers_group_id: systemGroupId(sys.realmId, 'role:members') });
  });

  t.test('privacy changes: update for those who keep sight, delete and create for those who lose or gain it', async (t) => {
    const laertes = await sys.createUser({ email: 'laertes@zulip.test', full_name: 'Laertes', role: Role.MEMBER });
    await ok(sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Agora' }], principals: [hamlet.user_id, iago.user_id] }));
    const agora = await idOf('Agora');
    await firstMessage(agora);
    const params = { event_types: ['stream', 'subscription'], apply_markdown: true, client_gravatar: false };
    const privately = () => ok(patch(iago, agora, { is_private: true }));
    // Three watchers at once: a subscriber, an administrator who is not subscribed, a member who loses sight.
    const watch = async (who: Account, expect: string[]) => verifyAction(t, sys, sys.client(who), privately, { params, expect });
    const events = await watch(hamlet, ['stream/update']);
    t.match(events[0], { property: 'invite_only', value: true, history_public_to_subscribers: false, is_web_public: false });
    await ok(patch(iago, agora, { is_private: false }));
    await watch(desdemona, ['stream/update']);
    await ok(patch(iago, agora, { is_private: false }));
    await watch(laertes, ['stream/delete']);
    await verifyAction(t, sys, sys.client(laertes), () => ok(patch(iago, agora, { is_private: false })), { params, expect: ['stream/create'] });
    // Private with shared history, then back.
    await verifyAction(t, sys, sys.client(hamlet), () => ok(patch(iago, agora, { is_private: true, history_public_to_subscribers: true })), { params, expect: ['stream/update'] });
    const s = (await ok(sys.client(hamlet).get(`/streams/${agora}`))).stream as Msg;
    t.match(s, { invite_only: true, history_public_to_subscribers: true });
    const texts = await notices(hamlet, agora);
    t.same(texts.slice(0, 2), [
      `@_**Iago|${iago.user_id}** changed the [access permissions](/help/stream-permissions) for this stream from **Public** to **Private, protected history**.`,
      `@_**Iago|${iago.user_id}** changed the [access permissions](/help/stream-permissions) for this stream from **Private, protected history** to **Public**.`,
    ]);
    t.equal(texts.at(-1), `@_**Iago|${iago.user_id}** changed the [access permissions](/help/stream-permissions) for this stream from **Public** to **Private, shared history**.`);
  });

  t.test("the notification bot's notices, with Zulip's texts", async (t) => {
    await ok(sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Notices' }] }));
    const id = await idOf('Notices');
    await ok(patch(desdemona, id, { description: 'Town crier' }));
    await ok(patch(desdemona, id, { new_name: 'Criers', stream_post_policy: 4 }));
    await ok(patch(iago, id, { message_retention_days: 30 }));
    let texts: string[] = [];
    for (let i = 0; i < 50 && texts.length < 4; i++) texts = await notices(hamlet, id);
    const d = `@_**Desdemona|${desdemona.user_id}**`;
    t.same(texts, [
      `${d} changed the description for this stream.\n\n* **Old description:**\n\`\`\`\` quote\n*No description.*\n\`\`\`\`\n* **New description:**\n\`\`\`\` quote\nTown crier\n\`\`\`\``,
      `${d} renamed stream **Notices** to **Criers**.`,
      `${d} changed the [posting permissions](/help/stream-sending-policy) for this stream:\n\n* **Old permissions**: All stream members can post.\n* **New permissions**: Only organization administrators and moderators can post.`,
      `@_**Iago|${iago.user_id}** has changed the [message retention period](/help/message-retention-policy) for this stream:\n* **Old retention period**: Forever\n* **New retention period**: 30 days\n\nMessages in this stream will now be automatically deleted 30 days after they are sent.`,
    ]);
  });

  t.test('a rename answers to the new name at once, and frees the old one', async (t) => {
    await ok(sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Elsinore' }] }));
    const id = await idOf('Elsinore');
    await ok(patch(desdemona, id, { new_name: 'Helsingør' }));
    const sent = await ok(sys.client(hamlet).post('/messages', { type: 'stream', to: 'Helsingør', topic: 'castle', content: 'renamed' }));
    t.equal((await ok(sys.client(othello).get(`/messages/${sent.id as number}`))).message.display_recipient, 'Helsingør');
    const old = await sys.client(hamlet).post('/messages', { type: 'stream', to: 'Elsinore', topic: 'castle', content: 'old name' });
    t.same(old.body, { result: 'error', msg: "Channel 'Elsinore' does not exist", code: 'STREAM_DOES_NOT_EXIST', stream: 'Elsinore' });
    await ok(sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Elsinore' }] }));
    t.not(await idOf('Elsinore'), id, 'the old name names a new stream');
    // A change of case only is allowed.
    await ok(patch(desdemona, id, { new_name: 'HELSINGØR' }));
    t.equal((await ok(sys.client(hamlet).get(`/streams/${id}`))).stream.name, 'HELSINGØR');
  });
});
