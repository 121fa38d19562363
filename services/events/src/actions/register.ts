/**
 * POST /register, race-free (STYLE B6, Zulip's events-system): the queue is created first,
 * so it receives every event from then on; then the owners read their state, each in one
 * PostgreSQL snapshot; finally the queue drops the events those snapshots already hold
 * (outbox events carry their origin schema and writing transaction id), now and for any that
 * arrive later. Nothing between the state and last_event_id is lost or applied twice.
 */
import { randomUUID } from 'node:crypto';
import { LIMITS, isGuest, readRegisterStateReply, versionFields, type RegisterRequest } from '@zc/shared/contracts';
import { RawJson, spliceObjects } from '@zc/shared/bus';
import { AppError, badRequest, isAppError } from '@zc/shared/errors';
import type { EventsDeps } from '../deps.js';
import { ALL_FETCH_TYPES, STATE_OWNERS, emptyStateFor, ownersFor, type StateOwner } from '../lib/initial-state.js';
import { parseEventsNarrow } from '../lib/narrow.js';

/** Zulip's EVENT_QUEUE_LONGPOLL_TIMEOUT_SECONDS: clients use it as their GET /events timeout. */
export const LONGPOLL_TIMEOUT_SECONDS = 90;

const LEGACY_SETTINGS_TYPES = ['update_display_settings', 'update_global_notifications'];

export const tooManyQueues = (limit: number) =>
  badRequest(`Too many event queues: at most ${limit} per user. Delete unused ones with DELETE /events.`);

/** The fetch list: fetch_event_types, else event_types, else everything we know. */
export function fetchTypesOf(r: Pick<RegisterRequest, 'event_types' | 'fetch_event_types' | 'client_capabilities'>): string[] {
  const asked = r.fetch_event_types ?? r.event_types;
  if (asked !== null) return [...new Set(asked)];
  return r.client_capabilities.user_settings_object === true ? [...ALL_FETCH_TYPES] : [...ALL_FETCH_TYPES, ...LEGACY_SETTINGS_TYPES];
}

/** The idle lifetime asked for: 0 means the default; capped at 7 days. */
export function lifespanSecsOf(asked: number, cfg: EventsDeps['config']): number {
  if (asked < 0) throw badRequest('Invalid queue_lifespan_secs');
  return asked === 0 ? cfg.defaultLifespanSecs : Math.min(asked, cfg.maxLifespanSecs);
}

function capabilitiesOf(raw: Record<string, unknown>): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (typeof v !== 'boolean') throw badRequest(`Invalid client_capabilities: ${k} is not a boolean`);
    out[k] = v;
  }
  return out;
}

interface OwnerAnswer {
  service: string;
  snapshot?: string;
  /** The owner's state keys and its JSON text (relayed, never parsed here: see register-state.ts). */
  keys: string[];
  state: RawJson;
}

async function askOwner(deps: EventsDeps, owner: StateOwner, r: RegisterRequest, fetch: string[]): Promise<OwnerAnswer> {
  const options = {
    apply_markdown: r.apply_markdown,
    client_gravatar: r.client_gravatar,
    include_subscribers: r.include_subscribers,
    slim_presence: r.slim_presence,
    narrow: r.narrow,
    all_public_streams: r.all_public_streams,
    client_capabilities: r.client_capabilities,
    event_types: r.event_types,
  };
  try {
    // The users service's state of a large realm is megabytes: it is relayed as text (raw-json.ts).
    const reply = await deps.bus.requestRaw(owner.contract, { actor: r.actor, fetch, options }, { timeoutMs: deps.config.registerStateTimeoutMs });
    return { service: owner.service, ...readRegisterStateReply(reply) };
  } catch (e) {
    if (!owner.required && isAppError(e) && e.code === 'SERVICE_UNAVAILABLE') {
      deps.log.warn({ owner: owner.service }, 'register state owner unavailable; its keys are empty');
      return { service: owner.service, keys: [], state: new RawJson('{}') };
    }
    throw e;
  }
}

const without = (o: Record<string, unknown>, keys: ReadonlySet<string>) => Object.fromEntries(Object.entries(o).filter(([k]) => !keys.has(k)));

/**
 * The reply's text: the empty defaults of the keys no owner gave, every owner's state as it came
 * and ours (an owner's constant such as max_message_length is the same as ours). Owners hold
 * distinct keys; should two ever give the same key, the states are parsed and merged (the later
 * owner wins) rather than the reply naming a key twice.
 */
function registerReply(deps: EventsDeps, answers: OwnerAnswer[], fetch: string[], ours: Record<string, unknown>): RawJson {
  const given = new Set<string>();
  let overlap = false;
  for (const a of answers) for (const k of a.keys) overlap = given.has(k) || (given.add(k), overlap);
  if (overlap) {
    deps.log.error({ owners: answers.map((a) => ({ service: a.service, keys: a.keys })) }, 'register state owners gave the same key');
    const merged: Record<string, unknown> = Object.assign({}, ...answers.map((a) => JSON.parse(a.state.text) as Record<string, unknown>));
    return spliceObjects([without(emptyStateFor(fetch), given), merged, without(ours, given)]);
  }
  return spliceObjects([without(emptyStateFor(fetch), given), ...answers.map((a) => a.state), without(ours, given)]);
}

/** Creates the queue and returns /register's reply (without the envelope), as JSON text. */
export async function doRegister(deps: EventsDeps, r: RegisterRequest): Promise<RawJson> {
  const { actor } = r;
  // Zulip's do_events_register: only users who may read every public stream may ask for all
  // of their events (a guest reads only the streams they are subscribed to).
  if (r.all_public_streams && isGuest(actor)) throw badRequest('User not authorized for this query');
  const narrow = parseEventsNarrow(r.narrow);
  const capabilities = capabilitiesOf(r.client_capabilities);
  const lifespanMs = lifespanSecsOf(r.queue_lifespan_secs, deps.config) * 1000;
  const fetch = fetchTypesOf(r);

  const live = await deps.store.liveQueuesOf(actor.user_id);
  if (live.length >= deps.config.maxQueuesPerUser) throw tooManyQueues(deps.config.maxQueuesPerUser);
  const { epoch } = await deps.registry.ensure();
  const queueId = randomUUID();
  const settings = {
    userId: actor.user_id,
    realmId: actor.realm_id,
    eventTypes: r.event_types === null ? null : [...new Set(r.event_types)],
    narrow,
    applyMarkdown: r.apply_markdown,
    clientGravatar: r.client_gravatar,
    allPublicStreams: r.all_public_streams,
    capabilities,
  };
  // A queue asked to live for days gets that life from its first poll on: until then it lives
  // the default lifespan, so queues registered and never polled are collected soon.
  const firstPollWithinMs = deps.config.defaultLifespanSecs * 1000;
  if (!(await deps.store.create({ ...settings, queueId, lifespanMs, firstPollWithinMs, epoch }, Date.now()))) {
    throw new AppError('INTERNAL_SERVER_ERROR', 'Internal server error', 500);
  }

  try {
    // Every owner is asked, not only those whose state is fetched: the snapshot of one whose
    // state the client does not fetch still drops its events for writes answered before
    // /register (a reaction added just before registering for `reaction` events only), as
    // Zulip, which sends events at commit, never delivers them. Such an owner is optional:
    // without its snapshot the queue only keeps those stale events.
    const fetched = new Set(ownersFor(fetch));
    const asked = STATE_OWNERS.map((o) => (fetched.has(o) ? o : { ...o, required: false }));
    const answers = await Promise.all(asked.map((o) => askOwner(deps, o, r, fetch)));
    const snapshots: Record<string, string> = {};
    for (const a of answers) if (a.snapshot) snapshots[a.service] = a.snapshot;
    const lastEventId = await deps.store.finishRegister(queueId, snapshots);
    if (lastEventId === undefined) throw new AppError('SERVICE_UNAVAILABLE', 'Event queue lost while registering, try again', 503);
    return registerReply(deps, answers, fetch, {
      ...versionFields(),
      queue_id: queueId,
      last_event_id: lastEventId,
      max_message_length: LIMITS.maxMessageLength,
      max_topic_length: LIMITS.maxTopicLength,
      event_queue_longpoll_timeout_seconds: LONGPOLL_TIMEOUT_SECONDS,
    });
  } catch (e) {
    // A queue the client never learns of must not count against its limit.
    await deps.store.delete(queueId, actor.user_id).catch(() => undefined);
    throw e;
  }
}

