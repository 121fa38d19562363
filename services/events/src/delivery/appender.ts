/**
 * Moves client events from the JetStream inbox (`events.inbox.v1.notify`) into the queues.
 *
 * Order: exactly one replica appends at a time (a leader lock in Redis with a TTL, renewed
 * every second, or at a third of a shorter TTL), reading the inbox in stream order. Events of one queue therefore reach
 * it in commit order however many replicas run; any replica serves polls.
 *
 * No loss, no duplicates: the registry keeps a cursor (the last inbox seq applied to every
 * queue). A new leader creates its own consumer, starting right after the cursor, so an
 * event the old leader had fetched but not applied is delivered again in its place, never
 * after younger ones. Each queue records the last seq it applied, so events the old leader
 * did apply before the cursor moved are skipped.
 *
 * Fencing: the lock's TTL alone cannot stop a leader that was paused (SIGSTOP, a long GC, a
 * partition) and resumes still believing it leads. Each leadership has a term that only
 * grows; every queue append and cursor move carries it and is refused where it lands once a
 * newer term has written there, and the consumer is named after the term (a former leader
 * cannot pull, or ack, from its successor's consumer, which it once could: the name was shared).
 */
import { randomUUID } from 'node:crypto';
import { AckPolicy, DeliverPolicy, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { eventJson } from '@zc/shared/bus';
import { ClientNotify, eventsInbox, type WakeAppended } from '@zc/shared/contracts';
import { ORIGIN_HEADER, TRACE_READ_HEADER, TXID_HEADER } from '@zc/shared/outbox';
import { traceClockMs } from '@zc/shared/telemetry';
import type { EventsDeps } from '../deps.js';
import { queueAccepts } from '../lib/event-filter.js';
import { finaliseForQueue, splitForQueue } from '../lib/finalise.js';
import type { CursorMove, QueueIndexes, QueueSettings, QueuedEvent } from '../store/queue-store.js';
import type { QueueWaker } from './wake.js';

/** Consumers of the inbox are `events_notify_<term>`: one per leadership term. */
const DURABLE_PREFIX = 'events_notify';
const durableOf = (term: number) => `${DURABLE_PREFIX}_${term}`;
/** Inbox events applied together: one script call per touched queue per batch. */
const MAX_BATCH = 500;
const FILTER_CACHE_SIZE = 200_000;
/**
 * Event JSON a wake carries at most (see wakeAppended): every gateway parses every wake, and
 * a poll answered from it saves only one Redis read, so large batches are read as before.
 */
const WAKE_APPENDED_MAX_CHARS = 64 * 1024;
/** Users and realms whose index the appender keeps a copy of at most (then it starts over). */
const INDEX_CACHE_SIZE = 200_000;

const isClientNotify = TypeCompiler.Compile(ClientNotify);
const isRealmDeactivation = (n: ClientNotify) => n.event.type === 'realm' && n.event.op === 'deactivated';
/** How long a deactivated realm's queues outlive the event, for the polls parked on them to get it. */
export const DEACTIVATED_REALM_QUEUE_GRACE_MS = 2_000;

interface Note {
  seq: number;
  /** When JetStream stored the event (ms since the epoch): right after its change committed. */
  storedMs: number;
  origin: string;
  txid: string;
  notify: ClientNotify;
  /** With ZC_DELIVERY_TRACE: when the relay read it and this replica received it (wall-clock ms). */
  trace?: { relayRead: number; received: number };
}

/** With ZC_DELIVERY_TRACE: when each inbox message reached this replica (wall-clock ms). */
const receivedAt = new WeakMap<JsMsg, number>();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/**
 * The leader renews its lock, and the others try to take it, this often (or at a third of a
 * shorter TTL): a successor starts within the TTL plus this after the leader stopped renewing.
 */
const ELECT_EVERY_MS = 1_000;
/**
 * How long the cursor move of an applied batch waits for the next batch to ride with (see
 * consumeFromCursor). Events are in their queues and polls woken before this; only the
 * restart point of a successor, and the inbox acknowledgement, wait.
 */
const CURSOR_LINGER_MS = 50;

/**
 * The events a wake carries (EventsBroadcast `appended`): for each queue that took every event
 * routed to it (none skipped as already applied or already in its /register state, so its new
 * ids are the `count` just up to its newest), the first id and its events, each distinct
 * event's JSON once. Undefined when no queue qualifies within WAKE_APPENDED_MAX_CHARS.
 */
export function wakeAppended(
  perQueue: ReadonlyMap<string, readonly QueuedEvent[]>,
  appended: ReadonlyMap<string, number>,
  newestIds: ReadonlyMap<string, number>,
): WakeAppended | undefined {
  const json: string[] = [];
  const indexOf = new Map<QueuedEvent, number>();
  const queues: Record<string, number[]> = {};
  let chars = 0;
  let any = false;
  for (const [queueId, list] of perQueue) {
    const newest = newestIds.get(queueId);
    if (newest === undefined || list.length === 0 || appended.get(queueId) !== list.length) continue;
    const fresh = list.filter((e) => !indexOf.has(e));
    const more = fresh.reduce((n, e) => n + e.json.length, 0);
    if (chars + more > WAKE_APPENDED_MAX_CHARS) continue;
    chars += more;
    for (const e of fresh) {
      indexOf.set(e, json.length);
      json.push(e.json);
    }
    queues[queueId] = [newest - list.length + 1, ...list.map((e) => indexOf.get(e) as number)];
    any = true;
  }
  return any ? { json, queues } : undefined;
}

export class Appender {
  private readonly token = randomUUID();
  private leading = false;
  /** This replica's current leadership term (0: not leading). */
  private term = 0;
  private stopped = false;
  private electing = false;
  private timer?: NodeJS.Timeout;
  private session?: Promise<void>;
  private messages?: ConsumerMessages;
  /** Queue settings never change, so they are cached; dead queues are dropped from it. */
  private readonly settingsCache = new Map<string, QueueSettings>();
  /**
   * The user and realm indexes as last read, under their generation (see route). Dropped when
   * the generation moved, and at the start of each consumer session.
   */
  private indexes?: QueueIndexes;
  /** Filter classes (see queueClass): by settings object, and by signature. */
  private readonly classOfSettings = new WeakMap<QueueSettings, number>();
  private readonly classIds = new Map<string, number>();
  private nextClassId = 0;

  constructor(
    private readonly deps: EventsDeps,
    private readonly hub: QueueWaker,
    /** Told of every event appended to the queues: its type and seconds since it was stored. */
    private readonly onDelivered?: (eventType: string, seconds: number) => void,
  ) {}

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    const every = Math.max(50, Math.min(ELECT_EVERY_MS, Math.floor(this.deps.config.leaderLockMs / 3)));
    void this.elect();
    this.timer = setInterval(() => void this.elect(), every);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.leading = false;
    this.messages?.stop();
    await this.session;
    await this.deps.store.releaseLock(this.token).catch(() => undefined);
  }

  private async elect(): Promise<void> {
    // One election at a time: while Redis hangs, overlapping rounds would act on stale answers.
    if (this.stopped || this.electing) return;
    this.electing = true;
    const { store, config, log } = this.deps;
    try {
      if (this.leading && !this.deps.bus.isConnected) {
        // Cut off from NATS for good, it could hold the lock forever while delivering nothing.
        log.warn('events leader lost its NATS connection; giving up the lock');
        this.resign('NATS connection closed');
        await store.releaseLock(this.token);
      } else if (this.leading) {
        if (!(await store.renewLock(this.token, config.leaderLockMs))) {
          log.warn('lost the events leader lock; stopping delivery');
          this.leading = false;
          this.messages?.stop();
        }
      } else if (!this.session && this.deps.bus.isConnected) {
        const term = await store.acquireLock(this.token, config.leaderLockMs);
        if (term === undefined) return;
        log.info({ term }, 'events leader: delivering the inbox');
        this.term = term;
        this.leading = true;
        this.session = this.deliverWhileLeading().finally(() => {
          this.session = undefined;
        });
      }
    } catch (err) {
      log.warn({ err }, 'leader election failed');
    } finally {
      this.electing = false;
    }
  }

  private async deliverWhileLeading(): Promise<void> {
    while (this.leading && !this.stopped) {
      try {
        await this.consumeFromCursor();
      } catch (err) {
        this.deps.log.warn({ err }, 'event delivery interrupted; resuming from the cursor');
        await sleep(250);
      }
    }
  }

  /** One consumer session, from the cursor until leadership ends, the registry resets, or an error. */
  private async consumeFromCursor(): Promise<void> {
    const { bus, registry, store, log } = this.deps;
    const term = this.term;
    this.indexes = undefined;
    // Claimed before the cursor is read: from here on no former leader moves it.
    await registry.ensure();
    if (!(await store.claimRegistry(term))) return this.resign('a newer leader claimed the registry');
    // The cursor first, then the inbox: a cursor another (outgoing) leader advanced after our
    // read of the inbox must not look like a cursor beyond the inbox's end.
    let { epoch, cursor } = await registry.ensure();
    const { stream, lastSeq, firstSeq } = await registry.inboxState();
    // The inbox lost events we never applied (or was recreated): per-queue seqs mean nothing
    // any more, so every queue is invalidated and clients re-register.
    if (cursor > lastSeq || cursor + 1 < firstSeq) {
      log.error({ cursor, lastSeq, firstSeq }, 'inbox does not hold the events after the cursor; resetting every queue');
      ({ epoch, cursor } = await registry.reset(lastSeq));
    }
    const jsm = await bus.jsm();
    const durable = durableOf(term);
    // Every other term's consumer goes (former leaders', and ours from an interrupted session).
    for await (const c of jsm.consumers.list(stream)) {
      if (c.name.startsWith(DURABLE_PREFIX)) await jsm.consumers.delete(stream, c.name).catch(() => undefined);
    }
    if (!this.leading || this.stopped) return;
    await jsm.consumers.add(stream, {
      durable_name: durable,
      ack_policy: AckPolicy.All,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: cursor + 1,
      filter_subject: bus.subject(eventsInbox.notify.subject),
      max_ack_pending: 20_000,
      ack_wait: 30 * 1e9,
    });
    const consumer = await bus.js.consumers.get(stream, durable);
    const messages = await consumer.consume({ max_messages: 1000 });
    this.messages = messages;
    // The inbox backlog (events not yet in any queue) is this consumer's lag in /metrics.
    const unwatch = bus.watchConsumer(stream, durable);
    if (!this.leading || this.stopped) messages.stop();

    // Messages pile up here while a batch is applied, so the next batch takes them all at once.
    const buffered: JsMsg[] = [];
    let kick: (() => void) | undefined;
    let ended = false;
    const pump = (async () => {
      try {
        for await (const m of messages) {
          if (this.deps.config.deliveryTrace) receivedAt.set(m, traceClockMs());
          buffered.push(m);
          kick?.();
        }
      } finally {
        ended = true;
        kick?.();
      }
    })();
    // The last batch applied to every queue whose cursor move (and acknowledgement) is still
    // to come: the move rides in the next batch's append pipeline, saving a round trip per
    // batch, or goes alone when nothing follows within CURSOR_LINGER_MS. Until then a
    // successor would start before this batch and skip its events queue by queue (each queue
    // records the last seq it applied), as it does for any batch applied but not yet recorded.
    let unmoved: JsMsg | undefined;
    const moveCursor = async (): Promise<'ok' | 'stop'> => {
      const last = unmoved as JsMsg;
      unmoved = undefined;
      return this.cursorMoved(await store.advanceCursor(epoch, last.seq, term), last);
    };
    try {
      while (this.leading && !this.stopped) {
        if (buffered.length === 0) {
          if (ended) break;
          let timer: NodeJS.Timeout | undefined;
          const arrived = await new Promise<boolean>((resolve) => {
            kick = () => resolve(true);
            if (unmoved) timer = setTimeout(() => resolve(false), CURSOR_LINGER_MS);
          });
          clearTimeout(timer);
          kick = undefined;
          if (!arrived && unmoved && (await moveCursor()) === 'stop') break;
          continue;
        }
        const batch = buffered.splice(0, MAX_BATCH);
        const previous = unmoved;
        unmoved = undefined;
        const outcome = await this.apply(batch, term, previous ? { epoch, seq: previous.seq } : undefined);
        if (outcome.fenced) {
          this.resign('a newer leader wrote to a queue');
          break;
        }
        if (previous && this.cursorMoved(outcome.cursor ?? 'reset', previous) === 'stop') break;
        unmoved = batch[batch.length - 1] as JsMsg;
      }
      if (unmoved && this.leading && !this.stopped) await moveCursor();
    } finally {
      unwatch();
      messages.stop();
      await pump.catch(() => undefined);
    }
  }

  /** Acknowledges through `last` once the cursor moved past it; 'stop' when delivery must restart or end. */
  private cursorMoved(moved: CursorMove, last: JsMsg): 'ok' | 'stop' {
    if (moved === 'fenced') {
      this.resign('a newer leader claimed the registry');
      return 'stop';
    }
    if (moved === 'reset') {
      this.deps.log.warn('queue registry was reset; restarting delivery from its cursor');
      return 'stop';
    }
    last.ack();
    return 'ok';
  }

  /** A newer term wrote somewhere: this replica stops delivering at once (the lock says so soon too). */
  private resign(why: string): void {
    if (!this.leading) return;
    this.deps.log.warn({ term: this.term, why }, 'fenced off: no longer the events leader');
    this.leading = false;
    this.messages?.stop();
    // Whoever fenced us may not hold the lock (a former leader still writing after Redis lost
    // its data): released, the next round elects someone with a newer term at once.
    this.deps.store.releaseLock(this.token).catch(() => undefined);
  }

  /**
   * Appends a batch of inbox events to every queue that wants them, then wakes their polls;
   * `cursor`: the registry cursor is moved there in the same round trip. `fenced` when a newer
   * leadership term has written to one of the queues.
   */
  async apply(batch: readonly JsMsg[], term: number, cursor?: { epoch: string; seq: number }): Promise<{ fenced: boolean; cursor?: CursorMove }> {
    const { store, config, log } = this.deps;
    const notes: Note[] = [];
    for (const m of batch) {
      let notify: unknown;
      try {
        notify = await eventJson(m);
      } catch {
        notify = undefined;
      }
      if (!isClientNotify.Check(notify)) {
        log.error({ seq: m.seq }, 'malformed client event dropped');
        continue;
      }
      const trace = config.deliveryTrace ? { relayRead: Number(m.headers?.get(TRACE_READ_HEADER) ?? 0), received: receivedAt.get(m) ?? 0 } : undefined;
      notes.push({ seq: m.seq, storedMs: m.info.timestampNanos / 1e6, origin: m.headers?.get(ORIGIN_HEADER) ?? '', txid: m.headers?.get(TXID_HEADER) ?? '', notify, ...(trace ? { trace } : {}) });
    }
    const limits = { maxEvents: config.maxEventsPerQueue, maxBytes: config.maxEventBytesPerQueue };
    const routed = await this.route(notes);
    const first = await store.appendAndAdvance(routed.perQueue, limits, term, cursor);
    const outcomes = [first.appended];
    if (first.generation !== routed.generation) {
      // An index changed since the indexes used were read: the queues they did not list may
      // be owed these events. Routed again from a fresh read, the batch goes to every queue
      // once more; those that applied it already skip it (by seq), the others get it.
      this.indexes = undefined;
      if (routed.cached) {
        const again = await this.route(notes);
        outcomes.push((await store.appendAndAdvance(again.perQueue, limits, term)).appended);
      }
    }
    const moved = first.cursor;
    const wake: string[] = [];
    let fenced = false;
    for (const [queueId, n] of outcomes.flatMap((o) => [...o])) {
      if (n === -3) {
        fenced = true;
        continue;
      }
      if (n > 0) wake.push(queueId);
      if (n < 0) {
        const s = this.settingsCache.get(queueId);
        this.settingsCache.delete(queueId);
        if (s) await store.removeFromIndexes(queueId, s);
        // That moved the generation: the next batch reads the indexes rather than append twice.
        this.indexes = undefined;
        if (n === -2) {
          log.warn({ queue_id: queueId, max_events: config.maxEventsPerQueue, max_bytes: config.maxEventBytesPerQueue }, 'event queue overflowed and was dropped');
          wake.push(queueId);
        }
      }
    }
    this.hub.broadcastWake(wake, outcomes.length === 1 ? wakeAppended(routed.perQueue, first.appended, first.newestIds) : undefined, config.deliveryTrace ? traceClockMs() : undefined);
    for (const n of notes) if (isRealmDeactivation(n.notify)) this.dropQueuesSoon(n.notify);
    if (this.onDelivered) {
      const now = Date.now();
      for (const n of notes) this.onDelivered(String(n.notify.event.type ?? 'unknown'), Math.max(0, now - n.storedMs) / 1000);
    }
    return { fenced, ...(moved ? { cursor: moved } : {}) };
  }

  /**
   * A deactivated realm's queues (every queue of the users the `realm`/`deactivated` event was
   * for, whatever their event_types) are deleted once the polls parked on them have had the
   * event: no poll can follow (authentication refuses the realm), so they would only hold
   * Redis until their lifespan. Best effort: if this replica stops before, the lifespan ends them.
   */
  private dropQueuesSoon(notify: ClientNotify): void {
    const { store, log } = this.deps;
    const userIds = notify.users.map((r) => (typeof r === 'number' ? r : r.id));
    const timer = setTimeout(() => {
      void (async () => {
        const ids = [...(await store.queuesOfUsers(userIds)).values()].flat();
        const settings = await store.settingsOf(ids);
        const dropped: string[] = [];
        for (const [id, s] of settings) {
          this.settingsCache.delete(id);
          if (s && s.realmId === notify.realm_id && (await store.delete(id, s.userId))) dropped.push(id);
        }
        this.hub.broadcastWake(dropped);
        log.info({ realm_id: notify.realm_id, queues: dropped.length }, 'event queues of a deactivated realm dropped');
      })().catch((err: unknown) => log.warn({ err, realm_id: notify.realm_id }, 'could not drop the event queues of a deactivated realm'));
    }, DEACTIVATED_REALM_QUEUE_GRACE_MS);
    timer.unref();
  }

  /**
   * The user and realm indexes of `userIds` and `realmIds`: from the copy when it has them all,
   * else read (one round trip) and kept. A copy stands for Redis as long as the generation it
   * was read under is current, which `apply` checks in the pipeline of its appends, after the
   * batch's events were committed: as good as a read then. A queue indexed after that check
   * took its /register snapshot after these events, so it does not need them.
   */
  private async indexesOf(userIds: ReadonlySet<number>, realmIds: ReadonlySet<number>): Promise<{ indexes: QueueIndexes; cached: boolean }> {
    const have = this.indexes;
    if (have && [...userIds].every((id) => have.byUser.has(id)) && [...realmIds].every((id) => have.byRealm.has(id))) return { indexes: have, cached: true };
    const read = await this.deps.store.queuesOf([...userIds], [...realmIds]);
    if (have && have.generation === read.generation && have.byUser.size + have.byRealm.size < INDEX_CACHE_SIZE) {
      for (const [id, q] of read.byUser) have.byUser.set(id, q);
      for (const [id, q] of read.byRealm) have.byRealm.set(id, q);
      return { indexes: have, cached: false };
    }
    this.indexes = read;
    return { indexes: read, cached: false };
  }

  /** Each queue's finalised events for `notes`, in inbox order, and the index generation they were routed under. */
  private async route(notes: readonly Note[]): Promise<{ perQueue: Map<string, QueuedEvent[]>; generation: QueueIndexes['generation']; cached: boolean }> {
    const { store } = this.deps;
    const userIds = new Set<number>();
    const publicRealms = new Set<number>();
    for (const { notify } of notes) {
      for (const r of notify.users) userIds.add(typeof r === 'number' ? r : r.id);
      if (notify.public_stream) publicRealms.add(notify.realm_id);
    }
    const { indexes, cached } = await this.indexesOf(userIds, publicRealms);
    const { byUser, byRealm } = indexes;
    const settings = await this.settingsOf([...new Set([...byUser.values(), ...byRealm.values()].flat())]);

    const perQueue = new Map<string, QueuedEvent[]>();
    // Index entries of queues that expired or were lost: removed so they are not looked up again.
    const dead = new Map<string, { userId: number; realmId: number }>();
    for (const note of notes) {
      const { notify } = note;
      const given = new Set<string>();
      // Whether a queue takes this event, and the events it then gets, depend only on its
      // filter class (queueClass), the recipient's flags and whether it is the sending queue:
      // decided once per class and flags, and each variant serialised once, its QueuedEvent
      // objects shared so that the append sends them once (APPEND). null: not accepted.
      const variants = new Map<string, QueuedEvent[] | null>();
      const give = (queueId: string, s: QueueSettings, flags: readonly string[] | undefined) => {
        if (given.has(queueId)) return;
        const isSenderQueue = notify.sender_queue_id === queueId;
        const key = isSenderQueue ? undefined : `${this.queueClass(s)}|${flags?.join(',') ?? '-'}`;
        let events = key === undefined ? undefined : variants.get(key);
        if (events === undefined) {
          events = queueAccepts(s, notify.event, flags ?? []) ? this.eventsFor(note, queueId, s, flags) : null;
          if (key !== undefined) variants.set(key, events);
        }
        if (events === null) return;
        given.add(queueId);
        let list = perQueue.get(queueId);
        if (!list) perQueue.set(queueId, (list = []));
        for (const e of events) list.push(e);
      };
      for (const r of notify.users) {
        const userId = typeof r === 'number' ? r : r.id;
        const flags = typeof r === 'number' ? undefined : r.flags;
        for (const queueId of byUser.get(userId) ?? []) {
          const s = settings.get(queueId);
          if (!s) dead.set(queueId, { userId, realmId: notify.realm_id });
          else if (s.userId === userId && s.realmId === notify.realm_id) give(queueId, s, flags);
        }
      }
      if (notify.public_stream) {
        for (const queueId of byRealm.get(notify.realm_id) ?? []) {
          const s = settings.get(queueId);
          if (s?.allPublicStreams && s.realmId === notify.realm_id) give(queueId, s, notify.event.type === 'message' ? [] : undefined);
        }
      }
    }
    await Promise.all([...dead].map(([queueId, owner]) => store.removeFromIndexes(queueId, owner)));
    return { perQueue, generation: indexes.generation, cached };
  }

  /** A note's events as queue `queueId` stores them (events split from one inbox entry share its seq). */
  private eventsFor(note: Note, queueId: string, s: QueueSettings, flags: readonly string[] | undefined): QueuedEvent[] {
    const view = { queueId, applyMarkdown: s.applyMarkdown, clientGravatar: s.clientGravatar, notificationSettingsNull: s.capabilities.notification_settings_null === true };
    const event = finaliseForQueue(note.notify, view, flags);
    if (note.trace) event.zc_trace = { relay_read: note.trace.relayRead, stored: note.storedMs, received: note.trace.received, routed: traceClockMs() };
    return splitForQueue(event, s.capabilities.bulk_message_deletion === true).map((e) => ({ seq: note.seq, origin: note.origin, txid: note.txid, json: JSON.stringify(e) }));
  }

  /**
   * A small number naming everything of a queue's settings that decides which events it takes
   * and their form (event_types, narrow, apply_markdown, client_gravatar, capabilities): queues
   * of one class get byte-equal events. Worked out once per settings object (they are cached).
   */
  private queueClass(s: QueueSettings): number {
    let id = this.classOfSettings.get(s);
    if (id === undefined) {
      const signature = JSON.stringify([s.eventTypes, s.narrow, s.applyMarkdown, s.clientGravatar, s.capabilities]);
      id = this.classIds.get(signature);
      if (id === undefined) {
        if (this.classIds.size >= FILTER_CACHE_SIZE) this.classIds.clear();
        this.classIds.set(signature, (id = this.nextClassId++));
      }
      this.classOfSettings.set(s, id);
    }
    return id;
  }

  private async settingsOf(queueIds: readonly string[]): Promise<Map<string, QueueSettings>> {
    const out = new Map<string, QueueSettings>();
    const missing: string[] = [];
    for (const id of queueIds) {
      const s = this.settingsCache.get(id);
      if (s) out.set(id, s);
      else missing.push(id);
    }
    for (const [id, s] of await this.deps.store.settingsOf(missing)) {
      if (!s) continue;
      out.set(id, s);
      if (this.settingsCache.size >= FILTER_CACHE_SIZE) this.settingsCache.delete(this.settingsCache.keys().next().value as string);
      this.settingsCache.set(id, s);
    }
    return out;
  }
}
