/** The pure parts of routing: narrow, event filters, per-queue finalisation, register helpers. */
import t from 'tap';
import { fetchTypesOf, lifespanSecsOf } from '../../src/actions/register.js';
import { loadEventsConfig } from '../../src/config.js';
import { queueAccepts } from '../../src/lib/event-filter.js';
import { finaliseForQueue, splitForQueue } from '../../src/lib/finalise.js';
import { ALL_FETCH_TYPES, emptyStateFor, ownersFor } from '../../src/lib/initial-state.js';
import { messageMatchesNarrow, parseEventsNarrow } from '../../src/lib/narrow.js';

const streamMessage = {
  id: 5,
  type: 'stream',
  display_recipient: 'Verona',
  stream_id: 3,
  subject: 'Tidings',
  sender_email: 'Othello@zulip.test',
  sender_id: 8,
  content: '<p>hi</p>',
  content_type: 'text/html',
  raw_content: 'hi',
  avatar_url: 'https://secure.gravatar.com/avatar/x',
  sender_delivery_email: 'Othello@zulip.test',
  sender_avatar_source: 'G',
  sender_avatar_version: 1,
};
const dm = { ...streamMessage, type: 'private', display_recipient: [], subject: '' };

t.test('narrow', async (t) => {
  const n = (terms: unknown) => parseEventsNarrow(terms as never);
  t.same(n([['channel', 'Verona'], { operator: 'topic', operand: 'x' }, ['is', 'dm']]), [
    { operator: 'stream', operand: 'Verona' },
    { operator: 'topic', operand: 'x' },
    { operator: 'is', operand: 'dm' },
  ]);
  t.throws(() => n([['search', 'x']]), { code: 'BAD_REQUEST', message: 'Operator search not supported.' });
  t.equal(n(Array.from({ length: 20 }, () => ['is', 'dm'])).length, 20);
  t.throws(() => n(Array.from({ length: 21 }, () => ['is', 'dm'])), { code: 'BAD_REQUEST', message: 'Invalid narrow: at most 20 operators.' });
  t.throws(() => n([['topic', 'x'.repeat(1001)]]), { code: 'BAD_REQUEST', message: 'Invalid narrow: operand of topic longer than 1000 characters.' });
  const m = (terms: unknown, msg: Record<string, unknown>, flags: string[] = []) => messageMatchesNarrow(n(terms), msg, flags);
  t.ok(m([], streamMessage), 'no narrow: everything');
  t.ok(m([['stream', 'verona'], ['topic', 'TIDINGS']], streamMessage), 'names compare case-insensitively');
  t.ok(m([['stream', '3']], streamMessage), 'stream by id');
  t.notOk(m([['stream', 'Denmark']], streamMessage));
  t.notOk(m([['stream', 'Verona']], dm), 'a DM is in no stream');
  t.ok(m([['sender', 'othello@zulip.test']], streamMessage));
  t.ok(m([['is', 'private']], dm));
  t.notOk(m([['is', 'dm']], streamMessage));
  t.ok(m([['is', 'starred']], streamMessage, ['starred']));
  t.notOk(m([['is', 'mentioned']], streamMessage, ['read']));
  t.ok(m([['is', 'alerted']], streamMessage, ['has_alert_word']));
});

t.test('event filter', async (t) => {
  const q = (eventTypes: string[] | null, capabilities: Record<string, boolean> = {}, narrow: unknown = []) => ({ eventTypes, narrow: parseEventsNarrow(narrow as never), capabilities });
  t.ok(queueAccepts(q(null), { type: 'drafts' }, []));
  t.notOk(queueAccepts(q(['message']), { type: 'drafts' }, []));
  t.ok(queueAccepts(q(['muted_topics']), { type: 'muted_topics' }, []));
  t.notOk(queueAccepts(q(['muted_topics', 'user_topic']), { type: 'muted_topics' }, []), 'user_topic replaces muted_topics');
  t.ok(queueAccepts(q(null), { type: 'muted_topics' }, []), 'only an explicit user_topic suppresses it (as Zulip)');
  t.notOk(queueAccepts(q(null, {}, [['stream', 'Denmark']]), { type: 'message', message: streamMessage }, []), 'narrow filters messages');
  t.ok(queueAccepts(q(null, {}, [['stream', 'Denmark']]), { type: 'drafts' }, []), '…and nothing else');
  t.notOk(queueAccepts(q(null), { type: 'typing', stream_id: 3 }, []));
  t.ok(queueAccepts(q(null, { stream_typing_notifications: true }), { type: 'typing', stream_id: 3 }, []));
  t.notOk(queueAccepts(q(null, { user_settings_object: true }), { type: 'update_display_settings' }, []));
});

t.test('finalise per queue', async (t) => {
  const notify = { realm_id: 1, users: [], event: { type: 'message', message: streamMessage }, sender_queue_id: 'q1', local_id: '7.01' };
  const view = (queueId: string, applyMarkdown: boolean, clientGravatar: boolean) => ({ queueId, applyMarkdown, clientGravatar });
  const html = finaliseForQueue(notify, view('q2', true, false), ['read']);
  t.same(html.flags, ['read']);
  t.notOk('local_message_id' in html, 'only the sending queue learns local_id');
  t.match(html.message, { content: '<p>hi</p>', content_type: 'text/html', avatar_url: 'https://secure.gravatar.com/avatar/x' });
  t.notOk('raw_content' in (html.message as object), 'private keys are dropped');
  const raw = finaliseForQueue(notify, view('q1', false, true), undefined);
  t.equal(raw.local_message_id, '7.01');
  t.same(raw.flags, []);
  t.match(raw.message, { content: 'hi', content_type: 'text/x-markdown', avatar_url: null });
  t.equal((notify.event.message as { raw_content: string }).raw_content, 'hi', 'the input is not changed');

  const person = { type: 'realm_user', op: 'add', person: { user_id: 3, avatar_url: 'https://secure.gravatar.com/avatar/y' } };
  const withPaths = { realm_id: 1, users: [], event: person, gravatar_fields: ['person.avatar_url', 'nowhere.avatar_url'] };
  t.same(finaliseForQueue(withPaths, view('q', true, true), undefined).person, { user_id: 3, avatar_url: null });
  t.same(finaliseForQueue(withPaths, view('q', true, false), undefined).person, person.person);
  t.same(finaliseForQueue({ realm_id: 1, users: [], event: person }, view('q', true, true), undefined).person, person.person, 'without gravatar_fields the URL stays');
  t.same(finaliseForQueue({ realm_id: 1, users: [], event: { type: 'update_message' } }, view('q', true, true), ['starred']).flags, ['starred']);
});

t.test('register helpers', async (t) => {
  const cfg = loadEventsConfig({});
  t.equal(lifespanSecsOf(0, cfg), 600);
  t.equal(lifespanSecsOf(30, cfg), 30);
  t.equal(lifespanSecsOf(10 * 24 * 3600, cfg), 7 * 24 * 3600);
  t.throws(() => lifespanSecsOf(-1, cfg));
  t.same(fetchTypesOf({ event_types: ['message'], fetch_event_types: null, client_capabilities: {} }), ['message']);
  t.same(fetchTypesOf({ event_types: ['message'], fetch_event_types: ['drafts', 'drafts'], client_capabilities: {} }), ['drafts']);
  t.ok(fetchTypesOf({ event_types: null, fetch_event_types: null, client_capabilities: {} }).includes('update_display_settings'));
  t.notOk(fetchTypesOf({ event_types: null, fetch_event_types: null, client_capabilities: { user_settings_object: true } }).includes('update_display_settings'));
  t.same(ownersFor(['drafts']).map((o) => o.service), ['drafts']);
  t.same(ownersFor(['message', 'realm']).map((o) => o.service), ['users', 'messages']);
  t.notOk('unread_msgs' in emptyStateFor(['message']), 'unread_msgs needs update_message_flags too');
  t.same(emptyStateFor(['message', 'update_message_flags']).unread_msgs, { count: 0, pms: [], streams: [], huddles: [], mentions: [], old_unreads_missing: false });
  t.ok(ALL_FETCH_TYPES.includes('drafts') && ALL_FETCH_TYPES.includes('presence'));
  t.throws(() => loadEventsConfig({ ZC_MAX_QUEUES_PER_USER: 'many' }));
});

t.test('delete_message: one event per message for queues without bulk_message_deletion', async (t) => {
  const event = { type: 'delete_message', message_type: 'stream', message_ids: [4, 7], stream_id: 3, topic: 'x' };
  t.same(splitForQueue(event, true), [event], 'bulk: as sent');
  t.same(splitForQueue(event, false), [
    { type: 'delete_message', message_type: 'stream', stream_id: 3, topic: 'x', message_id: 4 },
    { type: 'delete_message', message_type: 'stream', stream_id: 3, topic: 'x', message_id: 7 },
  ]);
  const other = { type: 'reaction', op: 'add', message_id: 4 };
  t.same(splitForQueue(other, false), [other], 'other events stay one');
});
