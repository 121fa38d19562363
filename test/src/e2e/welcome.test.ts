/**
 * Welcome Bot (ZC_WELCOME_MESSAGES, on by default as on Zulip): every new human user gets one
 * direct message from the realm's Welcome Bot, so nobody starts with no message at all; bots
 * get none, and a user who comes back is not greeted again.
 */
import t from 'tap';
import { startSystem, type Account } from '../harness.js';

interface Msg { id: number; type: string; sender_full_name: string; sender_id: number; content: string; flags: string[]; display_recipient: unknown }

t.test('a new human user finds one direct message from Welcome Bot; bots and returning users get none', async (t) => {
  const sys = await startSystem(t, { config: { welcomeMessages: true } });
  const { iago } = sys.people;
  const owner = sys.client(iago);
  const messagesOf = async (who: Account): Promise<Msg[]> =>
    ((await sys.client(who).get('/messages', { anchor: 'newest', num_before: 20, num_after: 0 })).body.messages as Msg[]) ?? [];
  /** The messages of `who` once the outbox has carried the greeting (or 3 s have passed). */
  const settled = async (who: Account, count: number): Promise<Msg[]> => {
    for (let i = 0; i < 60; i++) {
      const found = await messagesOf(who);
      if (found.length >= count) return found;
      await new Promise((r) => setTimeout(r, 50));
    }
    return messagesOf(who);
  };

  const r = await owner.post('/users', { email: 'newcomer@zulip.test', password: 'a long enough password', full_name: 'Newcomer' });
  t.equal(r.status, 200);
  const key = await sys.anonymous().post('/fetch_api_key', { username: 'newcomer@zulip.test', password: 'a long enough password' });
  const newcomer: Account = { user_id: r.body.user_id as number, email: 'newcomer@zulip.test', api_key: key.body.api_key as string, full_name: 'Newcomer', password: '' };

  const [greeting, ...others] = await settled(newcomer, 1);
  t.same(others, [], 'exactly one message');
  t.match(greeting, { type: 'private', sender_full_name: 'Welcome Bot', content: /welcome to Elsinore/ }, "Welcome Bot's direct message, with the realm's name");
  t.notOk(greeting?.flags.includes('read'), 'unread, as a new message is');

  const register = await sys.client(newcomer).post('/register', { fetch_event_types: ['realm_user', 'message', 'update_message_flags'] });
  const bots = register.body.cross_realm_bots as Array<{ user_id: number; full_name: string; is_system_bot: boolean }>;
  t.match(bots.find((b) => b.user_id === greeting?.sender_id), { full_name: 'Welcome Bot', is_system_bot: true }, 'Welcome Bot is one of the system bots clients list');
  t.equal((register.body.unread_msgs as { count: number }).count, 1, 'counted unread at start');

  // The people the system seeded were greeted too, the realm's owner included.
  t.match(await settled(iago, 1), [{ sender_full_name: 'Welcome Bot' }], 'the owner who created the realm');

  const bot = await sys.createUser({ email: 'helper-bot@zulip.test', full_name: 'Helper', is_bot: true });
  await new Promise((r) => setTimeout(r, 500));
  t.same(await messagesOf(bot), [], 'a bot is not greeted');

  // Leaving and coming back is not a new sign-up.
  t.equal((await owner.delete(`/users/${newcomer.user_id}`)).status, 200);
  t.equal((await owner.post(`/users/${newcomer.user_id}/reactivate`)).status, 200);
  await new Promise((r) => setTimeout(r, 500));
  t.equal((await messagesOf(newcomer)).length, 1, 'no second greeting after reactivation');
});

t.test('with ZC_WELCOME_MESSAGES=false nobody is greeted and no Welcome Bot is made', async (t) => {
  const sys = await startSystem(t, { config: { welcomeMessages: false } });
  const { hamlet } = sys.people;
  await new Promise((r) => setTimeout(r, 300));
  t.same((await sys.client(hamlet).get('/messages', { anchor: 'newest', num_before: 5, num_after: 0 })).body.messages, []);
  const register = await sys.client(hamlet).post('/register', { fetch_event_types: ['realm_user'] });
  t.notOk((register.body.cross_realm_bots as Array<{ full_name: string }>).some((b) => b.full_name === 'Welcome Bot'));
});
