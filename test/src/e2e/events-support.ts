/**
 * Helpers for the events tests: a queue poller that behaves like a real client (tracks
 * last_event_id, skips heartbeats when asked), and `applyEvent`, the client-side application
 * of events to /register state that Zulip's test_events compares with a fresh /register.
 */
import type { ApiClient, Params } from '../client.js';

export type Json = Record<string, unknown>;
export type ClientEvent = Json & { id: number; type: string };

/** POST /register; throws unless it succeeds. */
export async function register(c: ApiClient, params: Params = {}): Promise<Json & { queue_id: string; last_event_id: number }> {
  const r = await c.post('/register', params);
  if (r.body.result !== 'success') throw new Error(`register failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as unknown as Json & { queue_id: string; last_event_id: number };
}

/** One client's view of a queue: polls, acknowledges what it received, keeps every event. */
export class QueuePoller {
  lastEventId: number;
  readonly received: ClientEvent[] = [];

  constructor(
    readonly client: ApiClient,
    readonly queueId: string,
    lastEventId: number,
  ) {
    this.lastEventId = lastEventId;
  }

  static async register(c: ApiClient, params: Params = {}): Promise<{ poller: QueuePoller; state: Json }> {
    const state = await register(c, params);
    return { poller: new QueuePoller(c, state.queue_id, state.last_event_id), state };
  }

  /** One GET /events; records and acknowledges (on the next call) what it returns. */
  async poll(o: { dontBlock?: boolean; signal?: AbortSignal } = {}): Promise<ClientEvent[]> {
    const r = await this.client.get('/events', { queue_id: this.queueId, last_event_id: this.lastEventId, dont_block: o.dontBlock ?? false }, { signal: o.signal });
    if (r.body.result !== 'success') throw Object.assign(new Error(`poll failed: ${r.status} ${JSON.stringify(r.body)}`), { response: r });
    const events = (r.body.events ?? []) as ClientEvent[];
    for (const e of events) {
      this.lastEventId = Math.max(this.lastEventId, e.id);
      this.received.push(e);
    }
    return events;
  }

  /** Polls (parking) until `count` non-heartbeat events arrived since this call, or `ms` pass. */
  async collect(count: number, ms = 10_000): Promise<ClientEvent[]> {
    const out: ClientEvent[] = [];
    const deadline = Date.now() + ms;
    while (out.length < count && Date.now() < deadline) {
      const ctrl = new AbortController();
      const timer = setTimeout(() => ctrl.abort(), Math.max(1, deadline - Date.now()));
      try {
        out.push(...(await this.poll({ signal: ctrl.signal })).filter((e) => e.type !== 'heartbeat'));
      } catch (e) {
        if (ctrl.signal.aborted) break;
        throw e;
      } finally {
        clearTimeout(timer);
      }
    }
    return out;
  }

  /** Everything waiting now, without parking. */
  async drain(): Promise<ClientEvent[]> {
    return (await this.poll({ dontBlock: true })).filter((e) => e.type !== 'heartbeat');
  }
}

const byKey = <T extends Json>(list: T[], key: string, value: unknown) => list.findIndex((x) => x[key] === value);

/**
 * Applies one event to /register state as a client would (zulip-terminal, the web app's
 * server_events_dispatch). Covers the event types the events service delivers so far.
 */
export function applyEvent(state: Json, e: ClientEvent, opts: { include_subscribers?: boolean; slim_presence?: boolean } = {}): void {
  const op = e.op as string | undefined;
  switch (e.type) {
    case 'heartbeat':
    case 'typing':
      return;
    case 'presence': {
      // The event is in the legacy format; the state in the one /register was asked for.
      const presences = state.presences as Record<string, Json>;
      const client = Object.values(e.presence as Record<string, Json>)[0] as Json;
      const ts = client.timestamp as number;
      if (opts.slim_presence) {
        const key = String(e.user_id);
        const cur = presences[key] ?? { active_timestamp: 0, idle_timestamp: 0 };
        presences[key] = {
          active_timestamp: client.status === 'active' ? Math.max(cur.active_timestamp as number, ts) : cur.active_timestamp,
          idle_timestamp: Math.max(cur.idle_timestamp as number, ts),
        };
      } else {
        presences[e.email as string] = { website: client, aggregated: { client: client.client, status: client.status, timestamp: ts } };
      }
      return;
    }
    case 'attachment':
      // /register carries no uploads (Zulip's apply_event ignores these too): they update a
      // list the client fetched with GET /attachments.
      return;
    case 'reaction':
      // Reactions live on messages, which /register does not carry.
      return;
    case 'delete_message': {
      // As a client does: the messages leave unread counts and starred messages.
      const ids = (e.message_ids as number[] | undefined) ?? [e.message_id as number];
      if (state.unread_msgs) removeUnread(state.unread_msgs as Json, ids);
      if (Array.isArray(state.starred_messages)) state.starred_messages = (state.starred_messages as number[]).filter((id) => !ids.includes(id));
      return;
    }
    case 'realm_user_settings_defaults':
      if (state.realm_user_settings_defaults) (state.realm_user_settings_defaults as Json)[e.property as string] = e.value;
      return;
    case 'realm_playgrounds':
      if ('realm_playgrounds' in state) state.realm_playgrounds = e.realm_playgrounds;
      return;
    case 'muted_users':
      // The user's whole list, as Zulip sends it.
      if ('muted_users' in state) state.muted_users = e.muted_users;
      return;
    case 'realm_emoji':
      // The event carries the realm's whole set (Zulip's realm_emoji update).
      if ('realm_emoji' in state) state.realm_emoji = e.realm_emoji;
      return;
    case 'drafts': {
      // Strict: an event applied twice, or one whose predecessor was lost, is an error here.
      const drafts = state.drafts as Json[];
      const at = (id: unknown) => {
        const i = byKey(drafts, 'id', id);
        if (i < 0) throw new Error(`drafts ${op}: draft ${String(id)} is not in the state`);
        return i;
      };
      if (op === 'add') {
        for (const d of e.drafts as Json[]) {
          if (byKey(drafts, 'id', d.id) >= 0) throw new Error(`drafts add: draft ${String(d.id)} is already in the state`);
          drafts.push(d);
        }
      } else if (op === 'update') drafts.splice(at((e.draft as Json).id), 1, e.draft as Json);
      else if (op === 'remove') drafts.splice(at(e.draft_id), 1);
      return;
    }
    case 'user_settings': {
      const settings = state.user_settings as Json | undefined;
      if (settings) settings[e.property as string] = e.value;
      // The server holds no drafts while synchronising is off (its drafts were deleted
      // without drafts events), and /register says so with an empty list.
      if (e.property === 'enable_drafts_synchronization' && e.value === false && Array.isArray(state.drafts)) state.drafts = [];
      return;
    }
    case 'update_display_settings':
      // Legacy top-level keys exist only where they were fetched (clients without user_settings_object).
      if ((e.setting_name as string) in state) state[e.setting_name as string] = e.setting;
      return;
    case 'update_global_notifications':
      if ((e.notification_name as string) in state) state[e.notification_name as string] = e.setting;
      return;
    case 'realm': {
      // As Zulip's apply_event: each changed setting is the state's realm_<name>.
      const data = op === 'update_dict' ? (e.data as Json) : { [e.property as string]: e.value };
      for (const [k, v] of Object.entries(data)) state[`realm_${k}`] = v;
      return;
    }
    case 'realm_user': {
      const person = e.person as Json;
      const active = state.realm_users as Json[];
      const inactive = state.realm_non_active_users as Json[];
      if (op === 'add') {
        // A reactivated user comes back as `add` (before feature level 222).
        const j = byKey(inactive, 'user_id', person.user_id);
        if (j >= 0) inactive.splice(j, 1);
        active.push(person);
      } else if (op === 'remove') {
        // Zulip's apply_event marks the user inactive: they move to realm_non_active_users.
        const [gone] = active.splice(byKey(active, 'user_id', person.user_id), 1);
        if (gone) inactive.push({ ...gone, is_active: false });
      } else if (op === 'update') {
        const list = byKey(active, 'user_id', person.user_id) >= 0 ? active : inactive;
        const i = byKey(list, 'user_id', person.user_id);
        const target = list[i] as Json;
        const { custom_profile_field: field, ...rest } = person;
        Object.assign(target, rest);
        if (field) {
          const f = field as Json;
          const data = target.profile_data as Json;
          if (f.value === null) delete data[String(f.id)];
          else data[String(f.id)] = 'rendered_value' in f ? { value: f.value, rendered_value: f.rendered_value } : { value: f.value };
        }
        if ('role' in person) {
          const role = person.role as number;
          Object.assign(target, { is_owner: role === 100, is_admin: role <= 200, is_guest: role === 600 });
          if (person.user_id === state.user_id) Object.assign(state, { is_owner: role === 100, is_admin: role <= 200, is_moderator: role === 300, is_guest: role === 600 });
        }
        if ('full_name' in person && person.user_id === state.user_id) state.full_name = person.full_name;
        if ('is_active' in person) {
          list.splice(i, 1);
          (person.is_active ? active : inactive).push(target);
        }
      }
      return;
    }
    case 'user_group': {
      // The web app's user_groups.ts: strict, so an event for a missing group or member fails.
      const groups = state.realm_user_groups as Json[];
      const at = (id: unknown) => {
        const i = byKey(groups, 'id', id);
        if (i < 0) throw new Error(`user_group ${String(op)}: no group ${String(id)}`);
        return i;
      };
      const group = () => groups[at(e.group_id)] as Json;
      const addTo = (key: string, ids: number[]) => {
        const list = group()[key] as number[];
        for (const id of ids) if (list.includes(id)) throw new Error(`user_group ${String(op)}: ${id} already in ${key}`);
        group()[key] = [...list, ...ids].sort((a, b) => a - b);
      };
      const removeFrom = (key: string, ids: number[]) => {
        const list = group()[key] as number[];
        for (const id of ids) if (!list.includes(id)) throw new Error(`user_group ${String(op)}: ${id} not in ${key}`);
        group()[key] = list.filter((x) => !ids.includes(x));
      };
      if (op === 'add') groups.push(e.group as Json);
      else if (op === 'update') Object.assign(group(), e.data as Json);
      else if (op === 'remove') groups.splice(at(e.group_id), 1);
      else if (op === 'add_members') addTo('members', e.user_ids as number[]);
      else if (op === 'remove_members') removeFrom('members', e.user_ids as number[]);
      else if (op === 'add_subgroups') addTo('direct_subgroup_ids', e.direct_subgroup_ids as number[]);
      else if (op === 'remove_subgroups') removeFrom('direct_subgroup_ids', e.direct_subgroup_ids as number[]);
      else throw new Error(`user_group: unknown op ${String(op)}`);
      return;
    }
    case 'realm_bot': {
      const bots = state.realm_bots as Json[];
      const bot = e.bot as Json;
      const i = byKey(bots, 'user_id', bot.user_id);
      if (op === 'add') {
        if (i >= 0) bots.splice(i, 1, bot);
        else bots.push(bot);
      } else if (op === 'remove' && i >= 0) (bots[i] as Json).is_active = false;
      else if (op === 'delete' && i >= 0) bots.splice(i, 1);
      else if (op === 'update' && i >= 0) Object.assign(bots[i] as Json, bot);
      return;
    }
    case 'custom_profile_fields':
      state.custom_profile_fields = e.fields;
      return;
    case 'user_status': {
      // Zulip's apply_event: keys present only while non-empty; the entry goes when empty.
      const all = state.user_status as Record<string, Json>;
      const key = String(e.user_id);
      const s = (all[key] ??= {});
      if (e.away !== undefined) {
        if (e.away) s.away = true;
        else delete s.away;
      }
      if (e.status_text !== undefined) {
        if (e.status_text === '') delete s.status_text;
        else s.status_text = e.status_text;
      }
      if (e.emoji_name !== undefined) {
        for (const k of ['emoji_name', 'emoji_code', 'reaction_type']) {
          if (e.emoji_name === '') delete s[k];
          else s[k] = e[k];
        }
      }
      if (Object.keys(s).length === 0) delete all[key];
      return;
    }
    case 'subscription': {
      const subs = state.subscriptions as Json[];
      if (op === 'add') {
        for (const s of e.subscriptions as Json[]) {
          for (const k of ['unsubscribed', 'never_subscribed']) {
            const l = state[k] as Json[] | undefined;
            if (l && byKey(l, 'stream_id', s.stream_id) >= 0) l.splice(byKey(l, 'stream_id', s.stream_id), 1);
          }
          // Zulip's events always carry subscribers; the state has them only when asked for.
          const { subscribers, ...rest } = s;
          subs.push(opts.include_subscribers ? { ...rest, subscribers } : rest);
        }
      } else if (op === 'remove') {
        for (const s of e.subscriptions as Json[]) {
          const i = byKey(subs, 'stream_id', s.stream_id);
          const [gone] = subs.splice(i, 1);
          if (gone) (state.unsubscribed as Json[] | undefined)?.push(gone);
        }
      } else if (op === 'update') {
        const sub = subs[byKey(subs, 'stream_id', e.stream_id)];
        if (sub) {
          sub[e.property as string] = e.value;
          if (e.property === 'in_home_view') sub.is_muted = !e.value;
          if (e.property === 'is_muted') sub.in_home_view = !e.value;
        }
      } else if (op === 'peer_add' || op === 'peer_remove') {
        for (const list of ['subscriptions', 'unsubscribed', 'never_subscribed']) {
          for (const s of (state[list] as Json[] | undefined) ?? []) {
            if (!(e.stream_ids as number[]).includes(s.stream_id as number) || !Array.isArray(s.subscribers)) continue;
            const set = new Set(s.subscribers as number[]);
            for (const u of e.user_ids as number[]) {
              if (op === 'peer_add') set.add(u);
              else set.delete(u);
            }
            s.subscribers = [...set].sort((a, b) => a - b);
          }
        }
      }
      return;
    }
    case 'stream': {
      const streams = state.streams as Json[] | undefined;
      if (op === 'create') {
        streams?.push(...(e.streams as Json[]));
        // Zulip's apply_event: a public stream one learns of is one never subscribed to.
        for (const s of e.streams as Json[]) {
          if (s.invite_only || !Array.isArray(state.never_subscribed)) continue;
          (state.never_subscribed as Json[]).push({ ...s, ...(opts.include_subscribers ? { subscribers: [] } : {}) });
        }
      } else if (op === 'delete') {
        // The stream is gone for the recipient (archived, or no longer visible): from every list.
        for (const id of (e.stream_ids as number[] | undefined) ?? (e.streams as Json[]).map((s) => s.stream_id)) {
          for (const k of ['streams', 'subscriptions', 'unsubscribed', 'never_subscribed']) {
            const l = state[k] as Json[] | undefined;
            if (l && byKey(l, 'stream_id', id) >= 0) l.splice(byKey(l, 'stream_id', id), 1);
          }
        }
      } else if (op === 'update') {
        for (const k of ['streams', 'subscriptions', 'unsubscribed', 'never_subscribed']) {
          const s = ((state[k] as Json[] | undefined) ?? []).find((x) => x.stream_id === e.stream_id);
          if (!s) continue;
          // Only what the object has: the stream list has no email_address, for one.
          if ((e.property as string) in s) s[e.property as string] = e.value;
          if ('rendered_description' in e) s.rendered_description = e.rendered_description;
          if ('history_public_to_subscribers' in e) s.history_public_to_subscribers = e.history_public_to_subscribers;
          if ('is_web_public' in e) s.is_web_public = e.is_web_public;
        }
      }
      return;
    }
    case 'user_topic': {
      const list = state.user_topics as Json[];
      const i = list.findIndex((x) => x.stream_id === e.stream_id && String(x.topic_name).toLowerCase() === String(e.topic_name).toLowerCase());
      if (i >= 0) list.splice(i, 1);
      if (e.visibility_policy !== 0) list.push({ stream_id: e.stream_id, topic_name: e.topic_name, last_updated: e.last_updated, visibility_policy: e.visibility_policy });
      return;
    }
    case 'muted_topics':
      state.muted_topics = e.muted_topics;
      return;
    case 'default_streams':
      if ('realm_default_streams' in state) state.realm_default_streams = e.default_streams;
      return;
    case 'message': {
      const m = e.message as Json;
      if ('max_message_id' in state) state.max_message_id = Math.max(state.max_message_id as number, m.id as number);
      const flags = e.flags as string[];
      const unread = state.unread_msgs as Json | undefined;
      if (unread && !flags.includes('read')) addUnread(unread, m, flags);
      return;
    }
    case 'update_message_flags': {
      const ids = e.messages as number[];
      if (e.flag === 'starred' && Array.isArray(state.starred_messages)) {
        const set = new Set(state.starred_messages as number[]);
        for (const id of ids) {
          if (op === 'add') set.add(id);
          else set.delete(id);
        }
        state.starred_messages = [...set].sort((a, b) => a - b);
      }
      if (e.flag === 'read' && op === 'add' && state.unread_msgs) removeUnread(state.unread_msgs as Json, e.all ? undefined : ids);
      return;
    }
    default:
      throw new Error(`applyEvent: no rule for ${e.type}`);
  }
}

function addUnread(unread: Json, m: Json, flags: string[]): void {
  unread.count = (unread.count as number) + 1;
  if (m.type === 'stream') {
    const streams = unread.streams as Json[];
    let entry = streams.find((s) => s.stream_id === m.stream_id && s.topic === m.subject);
    if (!entry) streams.push((entry = { stream_id: m.stream_id, topic: m.subject, unread_message_ids: [] }));
    (entry.unread_message_ids as number[]).push(m.id as number);
  } else {
    const others = (m.display_recipient as Json[]).map((r) => r.id as number);
    if (others.length <= 2) {
      const pms = unread.pms as Json[];
      const other = m.sender_id;
      let entry = pms.find((p) => p.other_user_id === other);
      if (!entry) pms.push((entry = { other_user_id: other, sender_id: other, unread_message_ids: [] }));
      (entry.unread_message_ids as number[]).push(m.id as number);
    } else {
      const huddles = unread.huddles as Json[];
      const key = [...others].sort((a, b) => a - b).join(',');
      let entry = huddles.find((h) => h.user_ids_string === key);
      if (!entry) huddles.push((entry = { user_ids_string: key, unread_message_ids: [] }));
      (entry.unread_message_ids as number[]).push(m.id as number);
    }
  }
  if (flags.includes('mentioned') || flags.includes('wildcard_mentioned')) (unread.mentions as number[]).push(m.id as number);
}

function removeUnread(unread: Json, ids: number[] | undefined): void {
  const drop = (list: number[]) => (ids === undefined ? [] : list.filter((id) => !ids.includes(id)));
  let count = 0;
  for (const k of ['streams', 'pms', 'huddles']) {
    unread[k] = (unread[k] as Json[])
      .map((x) => ({ ...x, unread_message_ids: drop(x.unread_message_ids as number[]) }))
      .filter((x) => {
        count += (x.unread_message_ids as number[]).length;
        return (x.unread_message_ids as number[]).length > 0;
      });
  }
  unread.mentions = drop(unread.mentions as number[]);
  unread.count = count;
}

/** Keys that differ between two registers by nature (queue identity, clocks). */
// presence_last_update_id moves with every stored ping, and presence events do not carry it.
const VOLATILE = new Set(['queue_id', 'last_event_id', 'server_timestamp', 'presence_last_update_id']);

/** A comparable copy of register state: volatile keys dropped, lists of objects sorted by id, keys sorted (readable diffs). */
export function comparable(state: Json): Json {
  const out: Json = {};
  for (const k of Object.keys(state).sort()) {
    if (VOLATILE.has(k) || k === 'result' || k === 'msg') continue;
    out[k] = normalise(state[k]);
  }
  return out;
}

function normalise(v: unknown): unknown {
  if (Array.isArray(v)) return sortById(v.map(normalise));
  if (v && typeof v === 'object') {
    const o = v as Json;
    return Object.fromEntries(Object.keys(o).sort().map((k) => [k, normalise(o[k])]));
  }
  return v;
}

function sortById(list: unknown[]): unknown[] {
  const id = (x: unknown) => {
    const o = x as Json;
    return (o?.id ?? o?.user_id ?? o?.stream_id ?? 0) as number;
  };
  return [...list].sort((a, b) => id(a) - id(b) || JSON.stringify(a).localeCompare(JSON.stringify(b)));
}
