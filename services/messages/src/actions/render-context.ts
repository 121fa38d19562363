/**
 * The renderer's view of a realm, kept in memory per replica: users (mentions), public
 * streams (channel links), linkifiers and alert words. Rendering a message then needs no
 * database round trip at all (the send path's budget is 1,000 messages/s, DESIGN.md).
 *
 * Freshness: each replica listens to the owners' domain events on core NATS (not a queue
 * group and not the durable consumer, which only one replica sees) and patches its copy from
 * the event payloads, which carry whole records and whole lists; the durable read-model
 * consumer patches it too. Core NATS delivery is at most once, so a realm's copy is also
 * reloaded from the read models after `ttlMs`. A load that raced with an event is used but
 * not kept.
 *
 * The two feeds run at different speeds: the durable consumer may trail core NATS by many
 * events, so each patched entry remembers the outbox id of the event that set it
 * (`Nats-Msg-Id`), and neither an older event nor a reload from the tables (which that
 * consumer writes) overwrites a newer entry. Without this a replaced linkifier rendered as no
 * linkifier at all for a while (issue 16).
 */
import type { Bus } from '@zc/shared/bus';
import { subscriptionsEvents, userGroupEvents, users, usersEvents, type Linkifier, type StreamRecord, type UserGroupRecord, type UserRecord } from '@zc/shared/contracts';
import { allMembers, withSystemGroups, type GroupShape } from '@zc/shared/policy';
import type { Pool } from '@zc/shared/db';
import type { Logger } from '@zc/shared/logging';
import type { RenderContext } from '../lib/render.js';
import { directoryRows } from '../store/read-model-store.js';
import { renderStore, type LinkableStream, type MentionableUser } from '../store/render-store.js';

export interface RealmRenderData {
  usersById: Map<number, MentionableUser>;
  /** Lower-cased full name → every user with that name. */
  usersByName: Map<string, MentionableUser[]>;
  /** Lower-cased name → public stream. */
  streamsByName: Map<string, LinkableStream>;
  linkifiers: Linkifier[];
  /** Users with alert words → their words. */
  alertWords: Map<number, string[]>;
  /** The realm's user groups (system ones included) by id; mentionable ones by lower-cased name. */
  groupsById: Map<number, GroupShape>;
  groupsByName: Map<string, GroupShape>;
  /** Each mentioned group's members through its subgroups, computed once per change of the realm's data. */
  groupMembers: Map<string, ReadonlySet<number>>;
  loadedAt: number;
}

/** Zulip mentions only groups users made (system groups are not mentionable at our feature level). */
function indexGroupNames(data: RealmRenderData): void {
  data.groupsByName = new Map([...data.groupsById.values()].filter((g) => !g.is_system_group).map((g) => [g.name.toLowerCase(), g]));
}

const DEFAULT_TTL_MS = 30_000;

function addByName(map: Map<string, MentionableUser[]>, u: MentionableUser): void {
  const key = u.full_name.toLowerCase();
  map.set(key, [...(map.get(key) ?? []).filter((x) => x.id !== u.id), u]);
}

/** Zulip's mention-by-name rule: a name two active users share mentions nobody. */
function uniqueByName(data: RealmRenderData, name: string): MentionableUser | undefined {
  const all = data.usersByName.get(name.toLowerCase()) ?? [];
  const candidates = all.length > 1 ? all.filter((u) => u.is_active) : all;
  return candidates.length === 1 ? candidates[0] : undefined;
}

/** Copies one patched entry ("<kind>/<key>", see `RenderContextCache.applied`) from `from` into `to`. */
function carryOver(from: RealmRenderData, to: RealmRenderData, entry: string): void {
  const [kind, key] = entry.split('/');
  const id = Number(key);
  if (kind === 'linkifiers') to.linkifiers = from.linkifiers;
  if (kind === 'alert_words') {
    const words = from.alertWords.get(id);
    if (words) to.alertWords.set(id, words);
    else to.alertWords.delete(id);
  }
  if (kind === 'user') {
    const stale = to.usersById.get(id);
    if (stale) {
      const name = stale.full_name.toLowerCase();
      to.usersByName.set(name, (to.usersByName.get(name) ?? []).filter((x) => x.id !== id));
    }
    const u = from.usersById.get(id);
    if (u) {
      to.usersById.set(id, u);
      addByName(to.usersByName, u);
    }
  }
  if (kind === 'stream') {
    for (const [name, s] of to.streamsByName) if (s.id === id) to.streamsByName.delete(name);
    for (const [name, s] of from.streamsByName) if (s.id === id) to.streamsByName.set(name, s);
  }
}

export class RenderContextCache {
  private readonly realms = new Map<number, RealmRenderData>();
  private readonly loading = new Map<number, Promise<RealmRenderData>>();
  /** Bumped by every change of a realm, so a load that overlapped one is not kept. */
  private readonly generation = new Map<number, number>();
  /** Per realm: entry ("<kind>/<key>") → outbox id of the newest event applied to it. */
  private readonly applied = new Map<number, Map<string, number>>();

  constructor(
    private readonly io: { pool: Pool; bus: Bus; log: Logger },
    private readonly ttlMs = DEFAULT_TTL_MS,
  ) {}

  /**
   * The realm's data from memory. Only the first use of a realm waits for the read models;
   * after the TTL the copy in hand is used while a fresh one loads in the background.
   */
  async forRealm(realmId: number): Promise<RealmRenderData> {
    const known = this.realms.get(realmId);
    if (known && Date.now() - known.loadedAt < this.ttlMs) return known;
    const load = this.loading.get(realmId) ?? this.startLoad(realmId);
    if (!known) return load;
    load.catch((err: unknown) => this.io.log.warn({ err, realm_id: realmId }, 'render context reload failed; keeping the old one'));
    return known;
  }

  private startLoad(realmId: number): Promise<RealmRenderData> {
    const load = this.load(realmId).finally(() => this.loading.delete(realmId));
    this.loading.set(realmId, load);
    return load;
  }

  private async load(realmId: number): Promise<RealmRenderData> {
    const gen = this.generation.get(realmId) ?? 0;
    const { pool } = this.io;
    const [userRows, streams, storedLinkifiers, alertRows, groups] = await Promise.all([
      renderStore.realmUsers(pool, realmId),
      renderStore.realmPublicStreams(pool, realmId),
      renderStore.realmLinkifiers(pool, realmId),
      renderStore.realmAlertWords(pool, realmId),
      directoryRows.realmGroups(pool, realmId),
    ]);
    const linkifiers = storedLinkifiers ?? (await this.fetchLinkifiers(realmId));
    const data: RealmRenderData = {
      usersById: new Map(userRows.map((u) => [u.id, u])),
      usersByName: new Map(),
      streamsByName: new Map(streams.map((s) => [s.name.toLowerCase(), s])),
      linkifiers,
      alertWords: new Map(alertRows.map((r) => [r.user_id, r.words])),
      groupsById: withSystemGroups(realmId, groups),
      groupsByName: new Map(),
      groupMembers: new Map(),
      loadedAt: Date.now(),
    };
    indexGroupNames(data);
    for (const u of userRows) addByName(data.usersByName, u);
    if ((this.generation.get(realmId) ?? 0) === gen) {
      // The tables may trail what core NATS already told us: entries patched by an event keep
      // their patched value (a reload never takes a replaced linkifier back).
      const old = this.realms.get(realmId);
      const seen = this.applied.get(realmId);
      if (old && seen) for (const entry of seen.keys()) carryOver(old, data, entry);
      this.realms.set(realmId, data);
    }
    return data;
  }

  /** The read model has never heard of this realm's linkifiers: ask the users service once and keep the answer. */
  private async fetchLinkifiers(realmId: number): Promise<Linkifier[]> {
    try {
      const { linkifiers } = await this.io.bus.request(users.listLinkifiers, { realm_id: realmId }, { timeoutMs: 3000 });
      await renderStore.setRealmLinkifiers(this.io.pool, realmId, linkifiers);
      return linkifiers;
    } catch (err) {
      // Rendering without linkifiers beats failing the send; the next load asks again.
      this.io.log.warn({ err, realm_id: realmId }, 'users service did not list linkifiers; rendering without them');
      return [];
    }
  }

  private changed(realmId: number): RealmRenderData | undefined {
    this.generation.set(realmId, (this.generation.get(realmId) ?? 0) + 1);
    const data = this.realms.get(realmId);
    data?.groupMembers.clear();
    return data;
  }

  applyGroup(g: UserGroupRecord): void {
    const data = this.changed(g.realm_id);
    if (!data) return;
    if (g.deleted) data.groupsById.delete(g.group_id);
    else data.groupsById.set(g.group_id, { id: g.group_id, name: g.name, is_system_group: g.is_system_group, members: g.members, direct_subgroup_ids: g.direct_subgroup_ids });
    indexGroupNames(data);
  }

  /**
   * Whether an event with this `Nats-Msg-Id` is newer than the one that last set `entry` (and
   * records it). Events without an outbox id, and realms not loaded, always apply.
   */
  private isNewer(realmId: number, entry: string, msgId: string | undefined): boolean {
    const id = Number(msgId?.slice(msgId.lastIndexOf(':') + 1));
    if (!Number.isSafeInteger(id) || !this.realms.has(realmId)) return true;
    let seen = this.applied.get(realmId);
    if (!seen) this.applied.set(realmId, (seen = new Map()));
    if ((seen.get(entry) ?? 0) >= id) return false;
    seen.set(entry, id);
    return true;
  }

  applyUser(u: UserRecord, msgId?: string): void {
    if (!this.isNewer(u.realm_id, `user/${u.user_id}`, msgId)) return;
    const data = this.changed(u.realm_id);
    if (!data) return;
    const previous = data.usersById.get(u.user_id);
    if (previous) {
      const key = previous.full_name.toLowerCase();
      data.usersByName.set(key, (data.usersByName.get(key) ?? []).filter((x) => x.id !== u.user_id));
    }
    const user = { id: u.user_id, full_name: u.full_name, is_active: u.is_active, role: u.role, date_joined: new Date(u.date_joined), is_system_bot: u.is_system_bot === true };
    data.usersById.set(u.user_id, user);
    addByName(data.usersByName, user);
  }

  applyStream(s: StreamRecord, msgId?: string): void {
    if (!this.isNewer(s.realm_id, `stream/${s.stream_id}`, msgId)) return;
    const data = this.changed(s.realm_id);
    if (!data) return;
    for (const [name, known] of data.streamsByName) if (known.id === s.stream_id) data.streamsByName.delete(name);
    if (!s.invite_only && !s.is_archived) data.streamsByName.set(s.name.toLowerCase(), { id: s.stream_id, name: s.name });
  }

  /**
   * A public stream the caller knows exists, for a message that mentions it before its
   * creation event has reached this replica (the stream's announcement): added unless a stream
   * of that id is known already (the events say more than the caller).
   */
  async knowStream(realmId: number, s: LinkableStream): Promise<void> {
    const data = await this.forRealm(realmId);
    for (const known of data.streamsByName.values()) if (known.id === s.id) return;
    data.streamsByName.set(s.name.toLowerCase(), { id: s.id, name: s.name });
  }

  setLinkifiers(realmId: number, linkifiers: readonly Linkifier[], msgId?: string): void {
    if (!this.isNewer(realmId, 'linkifiers', msgId)) return;
    const data = this.changed(realmId);
    if (data) data.linkifiers = [...linkifiers];
  }

  setAlertWords(realmId: number, userId: number, words: readonly string[], msgId?: string): void {
    if (!this.isNewer(realmId, `alert_words/${userId}`, msgId)) return;
    const data = this.changed(realmId);
    if (!data) return;
    if (words.length === 0) data.alertWords.delete(userId);
    else data.alertWords.set(userId, [...words]);
  }

  /** Every replica hears every change (Bus.listen: not a queue group); returns a stop function. */
  listen(bus: Bus): () => void {
    return bus.listen(RENDER_EVENTS, (...[subject, payload, { msgId }]) => {
      switch (subject) {
        case usersEvents.userCreated.subject:
        case usersEvents.userUpdated.subject:
          this.applyUser(payload, msgId);
          return;
        case usersEvents.linkifiersChanged.subject:
          this.setLinkifiers(payload.realm_id, payload.linkifiers, msgId);
          return;
        case usersEvents.alertWordsChanged.subject:
          this.setAlertWords(payload.realm_id, payload.user_id, payload.alert_words, msgId);
          return;
        case subscriptionsEvents.streamCreated.subject:
        case subscriptionsEvents.streamUpdated.subject:
          this.applyStream(payload, msgId);
          return;
        case userGroupEvents.changed.subject:
          this.applyGroup(payload);
          return;
      }
    });
  }
}

/** The owners' domain events that change what the renderer looks up. */
const RENDER_EVENTS = [
  usersEvents.userCreated,
  usersEvents.userUpdated,
  usersEvents.linkifiersChanged,
  usersEvents.alertWordsChanged,
  subscriptionsEvents.streamCreated,
  subscriptionsEvents.streamUpdated,
  userGroupEvents.changed,
] as const;

/** The RenderContext lookups over one realm's data. */
export function renderContextOf(
  data: RealmRenderData,
  realm: { url: string; settings: Record<string, unknown> },
  opts: { alertWords: readonly string[]; translateEmoticons: boolean; realmEmoji?: ReadonlyMap<string, { name: string; source_url: string }> },
): RenderContext {
  const defaultLanguage = realm.settings.default_code_block_language;
  return {
    realmUrl: realm.url.replace(/\/+$/, ''),
    linkifiers: data.linkifiers,
    users: {
      byFullName: (name) => uniqueByName(data, name),
      byId: (id) => data.usersById.get(id),
    },
    streams: { byName: (name) => data.streamsByName.get(name.toLowerCase()) },
    userGroups: { byName: (name) => data.groupsByName.get(name.toLowerCase()) },
    translateEmoticons: opts.translateEmoticons,
    alertWords: opts.alertWords,
    ...(opts.realmEmoji ? { realmEmoji: { byName: (name: string) => opts.realmEmoji?.get(name) } } : {}),
    inlineImagePreview: realm.settings.inline_image_preview !== false,
    ...(typeof defaultLanguage === 'string' && defaultLanguage !== '' ? { defaultCodeBlockLanguage: defaultLanguage } : {}),
  };
}

/**
 * Everyone in the mentioned groups, through subgroups at any depth (mention flags). Kept per
 * set of groups until the realm's data changes, so a busy group costs its expansion once.
 */
export function mentionedGroupMembers(data: RealmRenderData, groupIds: readonly number[], waitingPeriodDays: number): ReadonlySet<number> {
  if (groupIds.length === 0) return new Set();
  const key = `${waitingPeriodDays}:${groupIds.join(',')}`;
  let members = data.groupMembers.get(key);
  if (!members) {
    const users = [...data.usersById.values()].filter((u) => !u.is_system_bot);
    members = allMembers(groupIds, data.groupsById, { users, waitingPeriodDays });
    data.groupMembers.set(key, members);
  }
  return members;
}

/** The alert words of these users together (the renderer reports which occur). */
export function alertWordsOfUsers(data: RealmRenderData, userIds: Iterable<number>): string[] {
  const words = new Set<string>();
  for (const id of userIds) for (const w of data.alertWords.get(id) ?? []) words.add(w);
  return [...words];
}
