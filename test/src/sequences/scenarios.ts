/**
 * Short client scripts whose second call depends on the first, as bots and scripts run them
 * all day: create a stream and post to it, subscribe someone and mention them, create a user
 * and message them, replace a linkifier and post, leave a private stream and try to post.
 * Every read model a service keeps of another's data turns such a script into a race unless
 * the design closes it (docs/CONVENTIONS.md, "Read models and read-your-writes").
 *
 * Each scenario runs its calls back to back, with no sleeps, and spreads them over the
 * gateway replicas it is given, so consecutive calls land on different replicas of every
 * service. A scenario throws `SequenceFailure` with the whole transcript on the first
 * answer that is a 5xx, an unexpected error, or a read that does not reflect the write.
 */
import fc from 'fast-check';
import type { ApiClient, ApiResponse, Params } from '../client.js';
import type { Account, System } from '../harness.js';
import { request } from 'undici';
import { QueuePoller } from '../e2e/events-support.js';
import { png } from '../e2e/realm-emoji-support.js';
import { multipart } from '../e2e/uploads-support.js';

type Json = Record<string, unknown>;

export class SequenceFailure extends Error {}

/** The people and gateways a scenario may use, and a transcript of what it did. */
export class Script {
  readonly transcript: string[] = [];
  private turn = 0;

  constructor(
    readonly sys: System,
    readonly unique: string,
    private readonly gatewayOrder: number[],
  ) {}

  /** A client for `who` on the next gateway in this script's order. */
  as(who: Account): ApiClient {
    const urls = this.sys.gatewayUrls;
    const pick = this.gatewayOrder[this.turn++ % this.gatewayOrder.length] ?? 0;
    return this.sys.client(who, { baseUrl: urls[pick % urls.length] });
  }

  /** One call; a 5xx or an answer other than `expect` fails the script. */
  async call(who: Account, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, params: Params = {}, expect: 'success' | 'error' = 'success'): Promise<ApiResponse> {
    const r = await this.as(who).call(method, path, params);
    this.transcript.push(`${who.full_name}: ${method} ${path} ${JSON.stringify(params)} -> ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    if (r.status >= 500) this.fail(`${method} ${path} answered ${r.status}`);
    if (r.body.result !== expect) this.fail(`${method} ${path}: expected ${expect}, got ${r.status} ${r.body.msg}`);
    return r;
  }

  check(ok: boolean, what: string): void {
    if (!ok) this.fail(what);
  }

  fail(why: string): never {
    throw new SequenceFailure(`${why}\n  ${this.transcript.join('\n  ')}`);
  }
}

export interface Scenario {
  name: string;
  run(s: Script): Promise<void>;
}

const member = (s: Script) => s.sys.people.hamlet;
const other = (s: Script) => s.sys.people.othello;

async function streamId(s: Script, who: Account, name: string): Promise<number> {
  return (await s.call(who, 'GET', '/get_stream_id', { stream: name })).body.stream_id as number;
}

/** A public stream of the script's own with both members subscribed; returns its name. */
async function commonStream(s: Script): Promise<string> {
  const name = `Common ${s.unique}`;
  await s.call(member(s), 'POST', '/users/me/subscriptions', { subscriptions: [{ name }], principals: [member(s).user_id, other(s).user_id] });
  return name;
}

/** POST /realm/emoji/{name} with a small PNG, on the script's next gateway. */
async function uploadEmoji(s: Script, who: Account, name: string): Promise<void> {
  const client = s.as(who);
  const { body, contentType } = multipart([{ filename: 'emoji.png', contentType: 'image/png', data: await png(32, 32) }]);
  const res = await request(`${client.baseUrl}/api/v1/realm/emoji/${name}`, { method: 'POST', headers: client.headers({ 'content-type': contentType }), body });
  const text = await res.body.text();
  s.transcript.push(`${who.full_name}: POST /realm/emoji/${name} (image) -> ${res.statusCode} ${text.slice(0, 300)}`);
  if (res.statusCode !== 200) s.fail(`POST /realm/emoji/${name} answered ${res.statusCode}`);
}

async function messageAs(s: Script, who: Account, id: number): Promise<Json> {
  const r = await s.call(who, 'GET', `/messages/${id}`);
  return r.body.message as Json;
}

async function historyIds(s: Script, who: Account, narrow: unknown[]): Promise<number[]> {
  const r = await s.call(who, 'GET', '/messages', { anchor: 'newest', num_before: 20, num_after: 0, narrow });
  return (r.body.messages as Json[]).map((m) => m.id as number);
}

type When = 'before' | 'after';

/**
 * One kind of change for the register-then-change scenario: what it needs first, how to make
 * it (once before /register, once after), and which event is that change's.
 * `before: false` for ephemeral events (typing) that no snapshot holds.
 */
interface RegisterChange {
  type: string;
  before?: false;
  setup?: (s: Script) => Promise<Json>;
  make: (s: Script, ctx: Json, when: When) => Promise<void>;
  is: (e: Json, ctx: Json, when: When, s: Script) => boolean;
}

const tagOf = (s: Script, when: When) => `${when}${s.unique.replace(/[^A-Za-z0-9]/g, '')}`;

/** Two messages from the other member to the member, one per `When`. */
async function twoDirectMessages(s: Script): Promise<Json> {
  const ids: number[] = [];
  for (const n of [0, 1]) ids.push((await s.call(other(s), 'POST', '/messages', { type: 'private', to: [member(s).user_id], content: `setup ${n} ${s.unique}` })).body.id as number);
  return { before: ids[0], after: ids[1] };
}

/** For events carrying a whole list: the list after the `when` change (the before one lacks the after item). */
function listHolds(list: string[], beforeItem: string, afterItem: string, when: When): boolean {
  return when === 'after' ? list.includes(afterItem) : list.includes(beforeItem) && !list.includes(afterItem);
}

const REGISTER_CHANGES: Record<string, RegisterChange> = {
  message: {
    type: 'message',
    make: async (s, _c, when) => void (await s.call(other(s), 'POST', '/messages', { type: 'private', to: [member(s).user_id], content: `ping ${tagOf(s, when)}` })),
    is: (e, _c, when, s) => String((e.message as Json | undefined)?.content ?? '').includes(tagOf(s, when)),
  },
  reaction: {
    type: 'reaction',
    setup: twoDirectMessages,
    make: async (s, c, when) => void (await s.call(member(s), 'POST', `/messages/${c[when] as number}/reactions`, { emoji_name: 'tada' })),
    is: (e, c, when) => e.op === 'add' && e.message_id === c[when],
  },
  update_message: {
    type: 'update_message',
    setup: twoDirectMessages,
    make: async (s, c, when) => void (await s.call(other(s), 'PATCH', `/messages/${c[when] as number}`, { content: `edited ${tagOf(s, when)}` })),
    is: (e, c, when) => e.message_id === c[when],
  },
  update_message_flags: {
    type: 'update_message_flags',
    setup: twoDirectMessages,
    make: async (s, c, when) => void (await s.call(member(s), 'POST', '/messages/flags', { messages: [c[when] as number], op: 'add', flag: 'starred' })),
    is: (e, c, when) => e.flag === 'starred' && ((e.messages as number[] | undefined) ?? []).includes(c[when] as number),
  },
  delete_message: {
    type: 'delete_message',
    async setup(s) {
      const to = await commonStream(s);
      const ids: number[] = [];
      for (const n of [0, 1]) ids.push((await s.call(other(s), 'POST', '/messages', { type: 'stream', to, topic: 'doomed', content: `doomed ${n}` })).body.id as number);
      return { before: ids[0], after: ids[1] };
    },
    make: async (s, c, when) => void (await s.call(s.sys.people.desdemona, 'DELETE', `/messages/${c[when] as number}`)),
    is: (e, c, when) => ((e.message_ids as number[] | undefined) ?? [e.message_id]).includes(c[when] as number),
  },
  stream: {
    type: 'stream',
    setup: async (s) => ({ id: await streamId(s, member(s), await commonStream(s)) }),
    make: async (s, c, when) => void (await s.call(s.sys.people.desdemona, 'PATCH', `/streams/${c.id as number}`, { description: `about ${tagOf(s, when)}` })),
    is: (e, c, when, s) => e.op === 'update' && e.stream_id === c.id && e.property === 'description' && String(e.value).includes(tagOf(s, when)),
  },
  user_group: {
    type: 'user_group',
    make: async (s, _c, when) =>
      void (await s.call(s.sys.people.desdemona, 'POST', '/user_groups/create', { name: `g ${tagOf(s, when)}`, description: '', members: JSON.stringify([member(s).user_id]) })),
    is: (e, _c, when, s) => e.op === 'add' && (e.group as Json | undefined)?.name === `g ${tagOf(s, when)}`,
  },
  user_status: {
    type: 'user_status',
    make: async (s, _c, when) => void (await s.call(other(s), 'POST', '/users/me/status', { status_text: `busy ${tagOf(s, when)}` })),
    is: (e, _c, when, s) => e.status_text === `busy ${tagOf(s, when)}`,
  },
  attachment: {
    type: 'attachment',
    async make(s, _c, when) {
      const client = s.as(member(s));
      const { body, contentType } = multipart([{ filename: `${tagOf(s, when)}.txt`, contentType: 'text/plain', data: Buffer.from(when) }]);
      const res = await request(`${client.baseUrl}/api/v1/user_uploads`, { method: 'POST', headers: client.headers({ 'content-type': contentType }), body });
      const text = await res.body.text();
      s.transcript.push(`${member(s).full_name}: POST /user_uploads -> ${res.statusCode} ${text.slice(0, 300)}`);
      if (res.statusCode !== 200) s.fail(`POST /user_uploads answered ${res.statusCode}`);
    },
    is: (e, _c, when, s) => e.op === 'add' && (e.attachment as Json | undefined)?.name === `${tagOf(s, when)}.txt`,
  },
  typing: {
    type: 'typing',
    before: false,
    make: async (s) => void (await s.call(other(s), 'POST', '/typing', { op: 'start', to: JSON.stringify([member(s).user_id]) })),
    is: (e, _c, when) => when === 'after' && e.op === 'start',
  },
  user_topic: {
    type: 'user_topic',
    setup: async (s) => ({ id: await streamId(s, member(s), await commonStream(s)) }),
    make: async (s, c, when) =>
      void (await s.call(member(s), 'PATCH', '/users/me/subscriptions/muted_topics', { stream_id: c.id as number, topic: `t ${tagOf(s, when)}`, op: 'add' })),
    is: (e, _c, when, s) => e.topic_name === `t ${tagOf(s, when)}`,
  },
  drafts: {
    type: 'drafts',
    make: async (s, _c, when) =>
      void (await s.call(member(s), 'POST', '/drafts', {
        drafts: JSON.stringify([{ type: 'private', to: [other(s).user_id], topic: '', content: `d ${tagOf(s, when)}`, timestamp: Math.floor(Date.now() / 1000) }]),
      })),
    is: (e, _c, when, s) => e.op === 'add' && ((e.drafts as Json[] | undefined) ?? []).some((d) => d.content === `d ${tagOf(s, when)}`),
  },
  realm: {
    type: 'realm',
    make: async (s, _c, when) => void (await s.call(s.sys.people.desdemona, 'PATCH', '/realm', { description: `r ${tagOf(s, when)}` })),
    is: (e, _c, when, s) => ((e.data as Json | undefined)?.description ?? e.value) === `r ${tagOf(s, when)}`,
  },
  realm_emoji: {
    type: 'realm_emoji',
    make: async (s, _c, when) => uploadEmoji(s, s.sys.people.desdemona, `re_${tagOf(s, when).toLowerCase()}`),
    // The event carries the whole set: the change made before is the set without the later emoji.
    is: (e, _c, when, s) =>
      listHolds(
        Object.values((e.realm_emoji as Record<string, Json> | undefined) ?? {}).map((x) => String(x.name)),
        `re_${tagOf(s, 'before').toLowerCase()}`,
        `re_${tagOf(s, 'after').toLowerCase()}`,
        when,
      ),
  },
  user_settings: {
    type: 'user_settings',
    // From a third value, so both changes change something whatever an earlier run left.
    setup: async (s) => (await s.call(member(s), 'PATCH', '/settings', { emojiset: 'text' }), {}),
    make: async (s, _c, when) => void (await s.call(member(s), 'PATCH', '/settings', { emojiset: when === 'before' ? 'google' : 'twitter' })),
    is: (e, _c, when) => e.property === 'emojiset' && e.value === (when === 'before' ? 'google' : 'twitter'),
  },
  realm_user: {
    type: 'realm_user',
    async setup(s) {
      const email = `ru-${s.unique}@zulip.test`;
      const created = await s.call(s.sys.people.iago, 'POST', '/users', { email, password: `pw-${s.unique}-long-enough`, full_name: `Ru ${s.unique}` });
      return { id: created.body.user_id as number };
    },
    make: async (s, c, when) => void (await s.call(s.sys.people.iago, 'PATCH', `/users/${c.id as number}`, { full_name: `N ${tagOf(s, when)}` })),
    is: (e, c, when, s) => e.op === 'update' && (e.person as Json | undefined)?.user_id === c.id && (e.person as Json).full_name === `N ${tagOf(s, when)}`,
  },
  subscription: {
    type: 'subscription',
    make: async (s, _c, when) => void (await s.call(member(s), 'POST', '/users/me/subscriptions', { subscriptions: [{ name: `Queue ${tagOf(s, when)}` }] })),
    is: (e, _c, when, s) => e.op === 'add' && ((e.subscriptions as Json[] | undefined) ?? []).some((x) => x.name === `Queue ${tagOf(s, when)}`),
  },
  alert_words: {
    type: 'alert_words',
    make: async (s, _c, when) => void (await s.call(member(s), 'POST', '/users/me/alert_words', { alert_words: [`q${tagOf(s, when)}`] })),
    // The event carries the whole list: the change made before is the list without the later word.
    is: (e, _c, when, s) => listHolds((e.alert_words as string[] | undefined) ?? [], `q${tagOf(s, 'before')}`, `q${tagOf(s, 'after')}`, when),
  },
  muted_users: {
    type: 'muted_users',
    async setup(s) {
      const made: Json = {};
      for (const when of ['before', 'after'] as const) {
        const r = await s.call(s.sys.people.iago, 'POST', '/users', { email: `mu-${when}-${s.unique}@zulip.test`, password: `pw-${s.unique}-long-enough`, full_name: `Mu ${when} ${s.unique}` });
        made[when] = r.body.user_id as number;
      }
      return made;
    },
    make: async (s, c, when) => void (await s.call(member(s), 'POST', `/users/me/muted_users/${c[when] as number}`)),
    is: (e, c, when) => listHolds(((e.muted_users as Json[] | undefined) ?? []).map((m) => String(m.id)), String(c.before), String(c.after), when),
  },
  realm_playgrounds: {
    type: 'realm_playgrounds',
    make: async (s, _c, when) =>
      void (await s.call(s.sys.people.desdemona, 'POST', '/realm/playgrounds', { name: `PG ${tagOf(s, when)}`, pygments_language: 'Python', url_prefix: 'https://pg.example/?code=' })),
    // The event carries the whole list: the change made before is the list without the later one.
    is: (e, _c, when, s) =>
      listHolds(((e.realm_playgrounds as Json[] | undefined) ?? []).map((p) => String(p.name)), `PG ${tagOf(s, 'before')}`, `PG ${tagOf(s, 'after')}`, when),
  },
  realm_linkifiers: {
    type: 'realm_linkifiers',
    make: async (s, _c, when) =>
      void (await s.call(s.sys.people.desdemona, 'POST', '/realm/filters', { pattern: `RQ${tagOf(s, when)}(?P<n>[0-9]+)`, url_template: 'https://q.example/{n}' })),
    is: (e, _c, when, s) =>
      listHolds(((e.realm_linkifiers as Json[] | undefined) ?? []).map((l) => String(l.pattern).split('(')[0] as string), `RQ${tagOf(s, 'before')}`, `RQ${tagOf(s, 'after')}`, when),
  },
};

/** Builds the scenarios; each draws the choices that vary between runs from fast-check. */
export function scenarioArbitrary(): fc.Arbitrary<Scenario> {
  const createThenSend = fc.record({ byId: fc.boolean(), inviteOnly: fc.boolean(), shout: fc.boolean() }).map(
    (o): Scenario => ({
      name: `create stream (invite_only=${o.inviteOnly}) then send by ${o.byId ? 'id' : 'name'}`,
      async run(s) {
        const name = `Created ${s.unique}`;
        const me = member(s);
        await s.call(me, 'POST', '/users/me/subscriptions', { subscriptions: [{ name }], invite_only: o.inviteOnly });
        const to = o.byId ? await streamId(s, me, name) : o.shout ? name.toUpperCase() : name;
        const sent = await s.call(me, 'POST', '/messages', { type: 'stream', to, topic: 'first', content: `hello ${s.unique}` });
        const id = sent.body.id as number;
        s.check((await historyIds(s, me, [{ operator: 'stream', operand: name }])).includes(id), 'the sender reads the message in the new stream');
      },
    }),
  );

  const subscribeThenMention = fc.record({ inviteOnly: fc.boolean(), silent: fc.boolean() }).map(
    (o): Scenario => ({
      name: `subscribe someone to a ${o.inviteOnly ? 'private' : 'public'} stream then mention them`,
      async run(s) {
        const name = `Mention ${s.unique}`;
        const me = member(s);
        const them = other(s);
        await s.call(me, 'POST', '/users/me/subscriptions', { subscriptions: [{ name }], invite_only: o.inviteOnly });
        await s.call(me, 'POST', '/users/me/subscriptions', { subscriptions: [{ name }], principals: [them.user_id] });
        const mention = o.silent ? `@_**${them.full_name}**` : `@**${them.full_name}**`;
        const sent = await s.call(me, 'POST', '/messages', { type: 'stream', to: name, topic: 'hi', content: `${mention} welcome` });
        const msg = await messageAs(s, them, sent.body.id as number);
        const flags = msg.flags as string[];
        s.check(o.silent ? !flags.includes('mentioned') : flags.includes('mentioned'), `flags of the new subscriber: ${JSON.stringify(flags)}`);
      },
    }),
  );

  const createUserThenMessage = fc.record({ byEmail: fc.boolean(), group: fc.boolean() }).map(
    (o): Scenario => ({
      name: `create a user then message them by ${o.byEmail ? 'email' : 'id'}${o.group ? ' in a group' : ''}`,
      async run(s) {
        const admin = s.sys.people.iago;
        const email = `seq-${s.unique}@zulip.test`;
        const password = `pw-${s.unique}-long`;
        const created = await s.call(admin, 'POST', '/users', { email, password, full_name: `Seq ${s.unique}` });
        const userId = created.body.user_id as number;
        const me = member(s);
        const recipients = o.group ? [userId, other(s).user_id] : [userId];
        const to = o.byEmail ? (o.group ? [email, other(s).email] : [email]) : recipients;
        const sent = await s.call(me, 'POST', '/messages', { type: 'private', to, content: `welcome ${s.unique}` });
        const key = await s.as(me).call('POST', '/fetch_api_key', { username: email, password });
        s.transcript.push(`fetch_api_key -> ${key.status}`);
        s.check(key.status === 200, 'the new user can fetch an API key');
        const newcomer: Account = { user_id: userId, email, api_key: key.body.api_key as string, full_name: `Seq ${s.unique}`, password };
        s.check((await historyIds(s, newcomer, [])).includes(sent.body.id as number), 'the new user reads the message');
      },
    }),
  );

  const replaceLinkifierThenPost = fc.constant<Scenario>({
    name: 'delete and recreate a linkifier, then post',
    async run(s) {
      const admin = s.sys.people.desdemona;
      const tag = `SQ${s.unique.replace(/[^A-Za-z0-9]/g, '')}`;
      const pattern = `${tag}-(?P<n>[0-9]+)`;
      const first = await s.call(admin, 'POST', '/realm/filters', { pattern, url_template: 'https://old.example/{n}' });
      await s.call(admin, 'DELETE', `/realm/filters/${first.body.id as number}`);
      await s.call(admin, 'POST', '/realm/filters', { pattern, url_template: 'https://new.example/{n}' });
      const to = await commonStream(s);
      const sent = await s.call(member(s), 'POST', '/messages', { type: 'stream', to, topic: 'links', content: `see ${tag}-42` });
      const html = (await messageAs(s, member(s), sent.body.id as number)).content as string;
      s.check(html.includes('https://new.example/42') && !html.includes('old.example'), `rendered with the new linkifier: ${html}`);
    },
  });

  const leavePrivateThenPost = fc.constant<Scenario>({
    name: 'leave a private stream, then post to it',
    async run(s) {
      const name = `Leave ${s.unique}`;
      const me = member(s);
      await s.call(me, 'POST', '/users/me/subscriptions', { subscriptions: [{ name }], invite_only: true, principals: [me.user_id, other(s).user_id] });
      await s.call(me, 'POST', '/messages', { type: 'stream', to: name, topic: 't', content: 'before' });
      await s.call(me, 'DELETE', '/users/me/subscriptions', { subscriptions: [name] });
      const refused = await s.call(me, 'POST', '/messages', { type: 'stream', to: name, topic: 't', content: 'after' }, 'error');
      s.check(/Not authorized|does not exist/.test(refused.body.msg), `refused with Zulip's message: ${refused.body.msg}`);
    },
  });

  const lastLeavesPrivateThenReuse = fc.constant<Scenario>({
    name: "the last subscriber leaves a private stream (archived), then creates one of that name and posts at once",
    async run(s) {
      const name = `Vacate ${s.unique}`;
      const me = member(s);
      await s.call(me, 'POST', '/users/me/subscriptions', { subscriptions: [{ name }], invite_only: true });
      const old = await streamId(s, me, name);
      const before = await s.call(me, 'POST', '/messages', { type: 'stream', to: name, topic: 't', content: 'alone' });
      await s.call(me, 'DELETE', '/users/me/subscriptions', { subscriptions: [name] });
      await s.call(me, 'POST', '/users/me/subscriptions', { subscriptions: [{ name }] });
      const fresh = await streamId(s, me, name);
      s.check(fresh !== old, `a new stream took the freed name (${old} -> ${fresh})`);
      const sent = await s.call(me, 'POST', '/messages', { type: 'stream', to: name, topic: 't', content: 'again' });
      s.check((await messageAs(s, me, sent.body.id as number)).stream_id === fresh, 'the post went to the new stream');
      await s.call(me, 'GET', `/messages/${before.body.id as number}`, {}, 'error');
    },
  });

  const alertWordThenMessage = fc.constant<Scenario>({
    name: 'add an alert word, then receive a message with it',
    async run(s) {
      const word = `alarm${s.unique.replace(/[^a-z0-9]/gi, '')}`;
      await s.call(other(s), 'POST', '/users/me/alert_words', { alert_words: [word] });
      const to = await commonStream(s);
      const sent = await s.call(member(s), 'POST', '/messages', { type: 'stream', to, topic: 'alerts', content: `the ${word} rings` });
      const flags = (await messageAs(s, other(s), sent.body.id as number)).flags as string[];
      s.check(flags.includes('has_alert_word'), `has_alert_word right after adding the word: ${JSON.stringify(flags)}`);
    },
  });

  const muteThenReceive = fc.boolean().map(
    (unmute): Scenario => ({
      name: `mute a new user${unmute ? ', unmute them' : ''}, then they send a direct message at once`,
      async run(s) {
        const email = `muted-${s.unique}@zulip.test`;
        const password = `pw-${s.unique}-long`;
        const created = await s.call(s.sys.people.iago, 'POST', '/users', { email, password, full_name: `Muted ${s.unique}` });
        const userId = created.body.user_id as number;
        const key = await s.as(member(s)).call('POST', '/fetch_api_key', { username: email, password });
        const muted: Account = { user_id: userId, email, api_key: key.body.api_key as string, full_name: `Muted ${s.unique}`, password };
        await s.call(member(s), 'POST', `/users/me/muted_users/${userId}`);
        if (unmute) await s.call(member(s), 'DELETE', `/users/me/muted_users/${userId}`);
        const sent = await s.call(muted, 'POST', '/messages', { type: 'private', to: [member(s).user_id], content: `muted? ${s.unique}` });
        const flags = (await messageAs(s, member(s), sent.body.id as number)).flags as string[];
        s.check(flags.includes('read') !== unmute, `the muter's copy is ${unmute ? 'unread' : 'read'}: ${JSON.stringify(flags)}`);
      },
    }),
  );

  const draftThenList = fc.constant<Scenario>({
    name: 'create a stream, draft a message to it, then list drafts',
    async run(s) {
      const me = member(s);
      const name = `Drafted ${s.unique}`;
      await s.call(me, 'POST', '/users/me/subscriptions', { subscriptions: [{ name }] });
      const to = [await streamId(s, me, name)];
      const made = await s.call(me, 'POST', '/drafts', { drafts: [{ type: 'stream', to, topic: s.unique, content: 'draft', timestamp: Math.floor(Date.now() / 1000) }] });
      const id = (made.body.ids as number[])[0];
      const list = await s.call(me, 'GET', '/drafts');
      s.check((list.body.drafts as Json[]).some((d) => d.id === id), 'the new draft is listed');
    },
  });

  const draftsSyncSwitch = fc.boolean().map(
    (backOn): Scenario => ({
      name: `draft, turn drafts synchronisation off, draft again (refused)${backOn ? ', turn it on, list' : ''}`,
      async run(s) {
        const me = other(s);
        const draft = (content: string) => ({ drafts: [{ type: '', to: [], topic: '', content }] });
        await s.call(me, 'POST', '/drafts', draft(`kept? ${s.unique}`));
        await s.call(me, 'PATCH', '/settings', { enable_drafts_synchronization: false });
        const refused = await s.call(me, 'POST', '/drafts', draft('refused'), 'error');
        s.check(refused.body.msg === 'User has disabled synchronizing drafts.', `refused with Zulip's message: ${refused.body.msg}`);
        await s.call(me, 'PATCH', '/settings', { enable_drafts_synchronization: true });
        if (!backOn) return;
        const made = await s.call(me, 'POST', '/drafts', draft(`after ${s.unique}`));
        const list = await s.call(me, 'GET', '/drafts');
        const ids = (list.body.drafts as Json[]).map((d) => d.id);
        s.check(JSON.stringify(ids) === JSON.stringify(made.body.ids), `only the draft made after switching back on is listed: ${JSON.stringify(ids)}`);
      },
    }),
  );

  const emoticonSettingThenSend = fc.boolean().map(
    (on): Scenario => ({
      name: `set translate_emoticons=${on}, then send :) at once`,
      async run(s) {
        const me = member(s);
        await s.call(me, 'PATCH', '/settings', { translate_emoticons: on });
        const sent = await s.call(me, 'POST', '/messages', { type: 'private', to: [other(s).user_id], content: `:) ${s.unique}` });
        const html = (await messageAs(s, other(s), sent.body.id as number)).content as string;
        s.check(html.includes('emoji-1f642') === on, `rendered with translate_emoticons=${on}: ${html}`);
      },
    }),
  );

  const createThenMarkRead = fc.record({ inviteOnly: fc.boolean(), topicOnly: fc.boolean() }).map(
    (o): Scenario => ({
      name: `create a ${o.inviteOnly ? 'private' : 'public'} stream with a colleague, post, the colleague marks the ${o.topicOnly ? 'topic' : 'stream'} as read`,
      async run(s) {
        const name = `Read ${s.unique}`;
        const me = member(s);
        const them = other(s);
        await s.call(me, 'POST', '/users/me/subscriptions', { subscriptions: [{ name }], invite_only: o.inviteOnly, principals: [me.user_id, them.user_id] });
        const sent = await s.call(me, 'POST', '/messages', { type: 'stream', to: name, topic: 'unread', content: 'read me' });
        const id = await streamId(s, them, name);
        if (o.topicOnly) await s.call(them, 'POST', '/mark_topic_as_read', { stream_id: id, topic_name: 'unread' });
        else await s.call(them, 'POST', '/mark_stream_as_read', { stream_id: id });
        const flags = (await messageAs(s, them, sent.body.id as number)).flags as string[];
        s.check(flags.includes('read'), `the colleague's copy is read: ${JSON.stringify(flags)}`);
      },
    }),
  );

  const customEmojiThenUse = fc.constant<Scenario>({
    name: 'add a custom emoji, then post and react with it at once; deactivate it, then react again (refused)',
    async run(s) {
      const me = member(s);
      const name = `sq_${s.unique.toLowerCase().replace(/[^0-9a-z]/g, '')}`;
      await uploadEmoji(s, me, name);
      const to = await commonStream(s);
      const sent = await s.call(other(s), 'POST', '/messages', { type: 'stream', to, topic: 'emoji', content: `:${name}:` });
      const id = sent.body.id as number;
      const html = (await messageAs(s, other(s), id)).content as string;
      s.check(html.includes('class="emoji"') && html.includes(`alt=":${name}:"`) && html.includes('/user_avatars/'), `rendered as the custom emoji: ${html}`);
      await s.call(other(s), 'POST', `/messages/${id}/reactions`, { emoji_name: name });
      await s.call(me, 'DELETE', `/realm/emoji/${name}`);
      const refused = await s.call(me, 'POST', `/messages/${id}/reactions`, { emoji_name: name }, 'error');
      s.check(refused.body.msg === `Emoji '${name}' does not exist`, `a deactivated emoji is refused at once: ${refused.body.msg}`);
      const reactions = (await messageAs(s, me, id)).reactions as Json[];
      s.check(reactions.length === 1 && reactions[0]?.reaction_type === 'realm_emoji', `the earlier reaction stays: ${JSON.stringify(reactions)}`);
    },
  });

  const linkFileThenDownload = fc.constantFrom<'keep' | 'edit' | 'delete'>('keep', 'edit', 'delete').map(
    (then): Scenario => ({
      name: `upload a file, post a link to it, a colleague downloads it at once${then === 'keep' ? '' : `; ${then === 'edit' ? 'edit the link away' : 'delete the message'}, and the colleague is refused at once`}`,
      async run(s) {
        const me = member(s);
        const fetchAs = async (who: Account, method: 'GET' | 'POST', path: string, o: { body?: Buffer; contentType?: string } = {}) => {
          const client = s.as(who);
          const res = await request(`${client.baseUrl}${path}`, { method, headers: client.headers(o.contentType ? { 'content-type': o.contentType } : {}), ...(o.body ? { body: o.body } : {}) });
          const text = await res.body.text();
          s.transcript.push(`${who.full_name}: ${method} ${path} -> ${res.statusCode} ${text.slice(0, 200)}`);
          return { status: res.statusCode, text };
        };
        const { body, contentType } = multipart([{ filename: 'notes.txt', contentType: 'text/plain', data: Buffer.from(s.unique) }]);
        const up = await fetchAs(me, 'POST', '/api/v1/user_uploads', { body, contentType });
        if (up.status !== 200) s.fail(`POST /user_uploads answered ${up.status}`);
        const uri = (JSON.parse(up.text) as { uri: string }).uri;
        const to = await commonStream(s);
        const sent = await s.call(me, 'POST', '/messages', { type: 'stream', to, topic: 'files', content: `[notes](${uri})` });
        const got = await fetchAs(other(s), 'GET', uri);
        s.check(got.status === 200 && got.text === s.unique, `the colleague downloads the linked file: ${got.status}`);
        if (then === 'keep') return;
        const id = sent.body.id as number;
        if (then === 'edit') await s.call(me, 'PATCH', `/messages/${id}`, { content: 'no file after all' });
        else await s.call(s.sys.people.desdemona, 'DELETE', `/messages/${id}`);
        const refused = await fetchAs(other(s), 'GET', uri);
        s.check(refused.status === 403, `the colleague is refused once no message links it: ${refused.status}`);
      },
    }),
  );

  const registerThenChangeName = (kind: string, alsoBefore: boolean) =>
    `register, then at once a ${kind} change, delivered to the new queue${alsoBefore ? ' (and the same change made just before /register is not)' : ''}`;
  // ZC_SEQUENCE_ONLY=<part of a scenario's name> runs only those (to replay or to work on one).
  const only = process.env.ZC_SEQUENCE_ONLY;
  // Narrowed here too: filtering the whole mix afterwards would draw hundreds of scenarios for
  // each one kept when the name picks out a single kind of change.
  const allKinds = Object.keys(REGISTER_CHANGES);
  const onlyKinds = only ? allKinds.filter((k) => registerThenChangeName(k, false).includes(only) || registerThenChangeName(k, true).includes(only)) : [];
  const registerThenChange = fc.record({ kind: fc.constantFrom(...(onlyKinds.length > 0 ? onlyKinds : allKinds)), alsoBefore: fc.boolean() }).map(
    ({ kind, alsoBefore }): Scenario => ({
      name: registerThenChangeName(kind, alsoBefore),
      async run(s) {
        const change = REGISTER_CHANGES[kind] as RegisterChange;
        const me = member(s);
        const ctx = change.setup ? await change.setup(s) : {};
        const before = alsoBefore && change.before !== false;
        if (before) await change.make(s, ctx, 'before');
        const { poller } = await QueuePoller.register(s.as(me), { event_types: [change.type], client_capabilities: { user_settings_object: true, bulk_message_deletion: true } });
        s.transcript.push(`registered queue ${poller.queueId} for ${change.type}`);
        await change.make(s, ctx, 'after');
        const got: Json[] = [];
        const deadline = Date.now() + 10_000;
        while (!got.some((e) => change.is(e, ctx, 'after', s)) && Date.now() < deadline) got.push(...(await poller.collect(1, deadline - Date.now())));
        s.transcript.push(`queue got ${JSON.stringify(got).slice(0, 600)}`);
        // A user may hold 100 queues at most: give this one back, as a client closing does.
        await s.call(me, 'DELETE', '/events', { queue_id: poller.queueId });
        s.check(got.some((e) => change.is(e, ctx, 'after', s)), `the ${change.type} event of the change made after /register reached the queue`);
        if (before) s.check(!got.some((e) => change.is(e, ctx, 'before', s)), `the ${change.type} event of the change answered before /register did not`);
      },
    }),
  );

  const renameThenSend = fc.record({ byOldName: fc.boolean() }).map(
    (o): Scenario => ({
      name: `rename a stream, then send to its new name${o.byOldName ? ' and be refused under the old one' : ''}`,
      async run(s) {
        const to = await commonStream(s);
        const id = await streamId(s, member(s), to);
        const renamed = `Renamed ${s.unique}`;
        await s.call(s.sys.people.desdemona, 'PATCH', `/streams/${id}`, { new_name: renamed });
        if (o.byOldName) {
          const refused = await s.call(member(s), 'POST', '/messages', { type: 'stream', to, topic: 't', content: 'old name' }, 'error');
          s.check(refused.body.code === 'STREAM_DOES_NOT_EXIST', `the old name is refused: ${refused.body.msg}`);
        }
        const sent = await s.call(member(s), 'POST', '/messages', { type: 'stream', to: renamed, topic: 't', content: `renamed ${s.unique}` });
        s.check((await messageAs(s, other(s), sent.body.id as number)).display_recipient === renamed, 'the message is in the renamed stream');
      },
    }),
  );

  const makePrivateThenRead = fc.record({ byTopics: fc.boolean() }).map(
    (o): Scenario => ({
      name: `make a stream private, then a non-subscriber reads its ${o.byTopics ? 'topics' : 'message'}`,
      async run(s) {
        const name = `Closing ${s.unique}`;
        await s.call(member(s), 'POST', '/users/me/subscriptions', { subscriptions: [{ name }] });
        const id = await streamId(s, member(s), name);
        const sent = await s.call(member(s), 'POST', '/messages', { type: 'stream', to: id, topic: 'secret', content: `soon private ${s.unique}` });
        await s.call(s.sys.people.desdemona, 'PATCH', `/streams/${id}`, { is_private: true });
        if (o.byTopics) await s.call(other(s), 'GET', `/users/me/${id}/topics`, {}, 'error');
        else await s.call(other(s), 'GET', `/messages/${sent.body.id as number}`, {}, 'error');
      },
    }),
  );

  const all = onlyKinds.length > 0 ? registerThenChange : fc.oneof(renameThenSend, makePrivateThenRead, createThenSend, subscribeThenMention, createThenMarkRead, createUserThenMessage, replaceLinkifierThenPost, leavePrivateThenPost, lastLeavesPrivateThenReuse, alertWordThenMessage, muteThenReceive, draftThenList, draftsSyncSwitch, emoticonSettingThenSend, customEmojiThenUse, linkFileThenDownload, registerThenChange);
  return only ? all.filter((sc) => sc.name.includes(only)) : all;
}
