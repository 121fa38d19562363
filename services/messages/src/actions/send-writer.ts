/**
 * Writes checked sends to the database, several per transaction.
 *
 * Ordering: the events service delivers a queue's events in the order the outbox relays
 * them, and clients expect message events in id order. So within a realm, message ids must
 * grow in commit order. Each write transaction takes a per-realm transaction-level advisory
 * lock before drawing ids from the sequence and holds it until commit: two transactions of
 * one realm can never commit in the opposite order of their ids, on any replica.
 *
 * Throughput: that lock serialises a realm's commits, so one commit (one WAL flush) per
 * message would cap a realm at ~1/fsync-latency messages per second. Instead each replica
 * keeps one writer per realm: sends that arrive while a transaction is running wait and go
 * together in the next one (group commit done by us). At low load a send is one transaction;
 * under load each flush carries many messages. A batch that fails is retried one send at a
 * time so that one bad send cannot fail the others.
 *
 * Round trips: a batch without idempotency keys is one autocommit statement (lock, freshness
 * check, ids, messages, per-user rows, outbox: `messageStore.insertSends`), so the realm lock
 * is held for one round trip and one WAL flush. Batches with keys take the explicit
 * transaction below, which must read the keys before it knows what to insert.
 *
 * Freshness: a send checked against cached read-model rows (actions/send-context.ts) carries
 * the realm's read-model version; if the realm's version has moved by the time of the write,
 * the send is not written and fails with `StaleSendContext`, and its check runs again.
 */
import { eventsInbox, messagesEvents, type MessageEventMessage } from '@zc/shared/contracts';
import { transaction } from '@zc/shared/db';
import { detachedFromDeadline, type EventContract, type PayloadOf } from '@zc/shared/bus';
import { injectTraceHeaders } from '@zc/shared/telemetry';
import type { MessagesDeps } from '../deps.js';
import { flagNames } from '../lib/flags.js';
import { messageStore, type NewMessage } from '../store/message-store.js';
import { SendContextCache, StaleSendContext } from './send-context.js';

/** A send that passed every check and only lacks its id. */
export interface PreparedSend {
  message: Omit<NewMessage, 'id'>;
  /** Every user who gets the message (sender first) with their flag bits; a user listed twice gets the first entry. */
  recipients: Array<{ id: number; flags: number }>;
  /** The message event's `message` without `id`, built by the check. */
  event: Omit<MessageEventMessage, 'id'>;
  senderQueueId?: string;
  localId?: string;
  /** A public stream's message also reaches queues registered with all_public_streams. */
  publicStream?: boolean;
  /** Uploaded files the content links (the uploads service claims them); none: absent. */
  attachmentPathIds?: string[];
  idempotencyKey?: string;
  /** The realm's read-model version the checks read (written only if still current); none: not checked. */
  readModelVersion?: number;
}

/** What the writer uses of the service's dependencies. */
export type WriterDeps = Pick<MessagesDeps, 'pool' | 'settings' | 'outbox'>;

interface Pending {
  send: PreparedSend;
  resolve(id: number): void;
  reject(e: unknown): void;
}

// Two-key advisory lock namespace of this service's per-realm send lock.
const SEND_LOCK_CLASS = 0x6d736773; // 'msgs'
/** Idle limit of a keyed send transaction (it holds the realm's send lock; see writeBatch). */
const SEND_TX_IDLE_LIMIT_MS = 3_000;

/** What a batch write did: every send's id, or (nothing written) the realm's newer read-model version. */
type BatchOutcome = { ids: number[] } | { staleAt: number };

/** The client message event of a send, for the events service to route to its recipients. */
function notifyPayload(realmId: number, s: PreparedSend, id: number) {
  return {
    realm_id: realmId,
    // A recipient without flags is a bare id (the events service gives it `flags: []`): most
    // of a stream's recipients, so a 10,000-subscriber message's event is ~50 KB, not ~220 KB,
    // in the outbox, on the bus and in the events service's parse.
    users: s.recipients.map((r) => {
      const flags = r.flags === 0 ? [] : flagNames(r.flags);
      return flags.length > 0 ? { id: r.id, flags } : r.id;
    }),
    event: { type: 'message', message: { ...s.event, id, submessages: s.event.submessages.map((sm) => (sm.message_id === 0 ? { ...sm, id, message_id: id } : sm)) } },
    ...(s.senderQueueId !== undefined ? { sender_queue_id: s.senderQueueId } : {}),
    ...(s.localId !== undefined ? { local_id: s.localId } : {}),
    ...(s.publicStream ? { public_stream: true } : {}),
  } satisfies PayloadOf<typeof eventsInbox.notify>;
}

function sentPayload(realmId: number, s: PreparedSend, id: number) {
  return {
    realm_id: realmId,
    message_id: id,
    stream_id: s.message.stream_id,
    sender_id: s.message.sender_id,
    timestamp: Math.floor(s.message.date_sent.getTime() / 1000),
  } satisfies PayloadOf<typeof messagesEvents.messageSent>;
}

function attachmentsPayload(realmId: number, s: PreparedSend, id: number) {
  return {
    realm_id: realmId,
    message_id: id,
    sender_id: s.message.sender_id,
    date_sent: Math.floor(s.message.date_sent.getTime() / 1000),
    path_ids: s.attachmentPathIds ?? [],
    version: 0,
  } satisfies PayloadOf<typeof messagesEvents.messageAttachmentsChanged>;
}

/** A batch without idempotency keys: one statement (see the file comment). */
async function writeSimpleBatch(deps: WriterDeps, realmId: number, version: number | null, sends: readonly PreparedSend[]): Promise<BatchOutcome> {
  const userIds: number[] = [];
  const ords: number[] = [];
  const flags: number[] = [];
  const outbox: Array<{ subject: string; payload: string; ord: number; idPath: string; carrier: string }> = [];
  // Each row's payload with the message's id in it, once the id is known (for the relay).
  const withIds: Array<(id: number) => string> = [];
  const trace = injectTraceHeaders({});
  const carrier = JSON.stringify(trace);
  const add = (subject: string, ord: number, idPath: string, payloadOf: (id: number) => unknown) => {
    outbox.push({ subject, payload: JSON.stringify(payloadOf(0)), ord, idPath, carrier });
    withIds.push((id) => JSON.stringify(payloadOf(id)));
  };
  for (const [i, s] of sends.entries()) {
    const ord = i + 1;
    for (const r of s.recipients) {
      userIds.push(r.id);
      ords.push(ord);
      flags.push(r.flags);
    }
    add(eventsInbox.notify.subject, ord, '{event,message,id}', (id) => notifyPayload(realmId, s, id));
    add(messagesEvents.messageSent.subject, ord, '{message_id}', (id) => sentPayload(realmId, s, id));
    if (s.attachmentPathIds?.length) add(messagesEvents.messageAttachmentsChanged.subject, ord, '{message_id}', (id) => attachmentsPayload(realmId, s, id));
  }
  // The relay leader's own sends wake it directly (one statement, autocommit: committed once it
  // returns), handing it the rows so that it need not read them back.
  const quiet = deps.outbox?.leading === true;
  const written = await messageStore.insertSends(deps.pool, {
    lockClass: SEND_LOCK_CLASS,
    realmId,
    expectedVersion: version,
    messages: sends.map((s) => s.message),
    rows: { userIds, ords, flags },
    outbox,
    quiet,
  });
  if (quiet && written.ids.length > 0) {
    const { ids, outboxIds, txid } = written;
    // Once the callers have their answers: the payloads (tens of KB for a large stream) and the
    // relay's publish are not on the way of the send's acknowledgement.
    setImmediate(() => {
      const rows =
        txid !== null && outboxIds.length === outbox.length
          ? outbox.map((o, k) => ({ id: outboxIds[k] as number, txid, subject: o.subject, payload: (withIds[k] as (id: number) => string)(ids[o.ord - 1] as number), trace_carrier: trace }))
          : undefined;
      deps.outbox?.written(rows);
    });
  }
  if (written.ids.length !== sends.length) return { staleAt: written.version };
  return { ids: written.ids };
}

/**
 * Writes one batch; returns each send's message id (an earlier one for a repeated idempotency
 * key), or, when `version` is set and the realm's read models have moved past it, writes nothing.
 */
async function writeBatch(deps: WriterDeps, version: number | null, sends: readonly PreparedSend[]): Promise<BatchOutcome> {
  const realmId = sends[0]?.message.realm_id as number;
  // The one-statement write patches only the message's own id into its event; a widget's
  // submessage carries it too, so a batch with one takes the path that knows ids first.
  if (sends.every((s) => s.idempotencyKey === undefined && s.event.submessages.length === 0)) return writeSimpleBatch(deps, realmId, version, sends);
  return transaction(deps.pool, async (tx) => {
    // This transaction holds the realm's send lock: if its process is paused or stalls between
    // statements, every send of the realm (on every replica) waits until PostgreSQL ends it.
    // Its statements follow each other at once, so it gets a much shorter idle limit than the
    // pool's (10 s): a paused replica holds up the realm's sends for 3 s at most.
    await tx.query(`SET LOCAL idle_in_transaction_session_timeout = '${SEND_TX_IDLE_LIMIT_MS}ms'`);
    const ids = await messageStore.lockRealmAndAllocateIds(tx, SEND_LOCK_CLASS, realmId, sends.length);
    if (version !== null) {
      const now = await messageStore.readModelVersion(tx, realmId);
      // Nothing written yet; the ids drawn are simply skipped.
      if (now !== version) return { staleAt: now };
    }
    const keyed = sends.map((s, i) => ({ s, id: ids[i] as number })).filter((x) => x.s.idempotencyKey !== undefined);
    const claimed = await messageStore.claimIdempotencyKeys(
      tx,
      keyed.map((x) => x.s.message.sender_id),
      keyed.map((x) => x.s.idempotencyKey as string),
      keyed.map((x) => x.id),
    );
    const result: number[] = [];
    const fresh: Array<{ s: PreparedSend; id: number }> = [];
    for (const [i, s] of sends.entries()) {
      const id = ids[i] as number;
      if (s.idempotencyKey !== undefined) {
        const key = `${s.message.sender_id}\u0000${s.idempotencyKey}`;
        // Claimed by an earlier send of this batch: answer with its id. Taken by an earlier
        // transaction (any replica; the primary key made ours wait for it): answer with that one.
        const winner = claimed.get(key) ?? (await messageStore.findIdempotent(tx, s.message.sender_id, s.idempotencyKey));
        if (winner !== id) {
          result.push(winner as number);
          continue;
        }
      }
      result.push(id);
      fresh.push({ s, id });
    }
    const umUsers: number[] = [];
    const umMessages: number[] = [];
    const umFlags: number[] = [];
    const outbox: Array<{ subject: string; payload: string; carrier: string }> = [];
    const carrier = JSON.stringify(injectTraceHeaders({}));
    const event = <C extends EventContract>(c: C, payload: PayloadOf<C>) => outbox.push({ subject: c.subject, payload: JSON.stringify(payload), carrier });
    for (const { s, id } of fresh) {
      for (const r of s.recipients) {
        umUsers.push(r.id);
        umMessages.push(id);
        umFlags.push(r.flags);
      }
      event(eventsInbox.notify, notifyPayload(realmId, s, id));
      event(messagesEvents.messageSent, sentPayload(realmId, s, id));
      if (s.attachmentPathIds?.length) event(messagesEvents.messageAttachmentsChanged, attachmentsPayload(realmId, s, id));
    }
    await messageStore.insertBatch(tx, fresh.map(({ s, id }) => ({ ...s.message, id })), { userIds: umUsers, messageIds: umMessages, flags: umFlags }, outbox);
    return { ids: result };
  });
}

/**
 * The send with each recipient once (the first entry wins). The store inserts the per-user rows
 * without ON CONFLICT (a new message's rows cannot otherwise conflict), so a repeated user
 * would fail the whole batch (the check builds its list from a Set: this only guards it).
 */
function withDistinctRecipients(send: PreparedSend): PreparedSend {
  const seen = new Set<number>();
  const recipients = send.recipients.filter((r) => {
    if (seen.has(r.id)) return false;
    seen.add(r.id);
    return true;
  });
  return recipients.length === send.recipients.length ? send : { ...send, recipients };
}

/** One writer per realm per replica; see the file comment. */
export class SendWriter {
  private readonly queues = new Map<number, Pending[]>();
  private readonly draining = new Set<number>();
  /** The send checks' view of the read models, validated by every write. */
  readonly contexts: SendContextCache;

  constructor(private readonly deps: WriterDeps) {
    this.contexts = new SendContextCache(deps.pool);
  }

  /** Resolves with the message id once the message is committed. */
  submit(prepared: PreparedSend): Promise<number> {
    const send = withDistinctRecipients(prepared);
    return new Promise<number>((resolve, reject) => {
      const realmId = send.message.realm_id;
      const queue = this.queues.get(realmId) ?? [];
      queue.push({ send, resolve, reject });
      this.queues.set(realmId, queue);
      // The drain serves every caller queued behind this one: it must not stop at this caller's deadline.
      if (!this.draining.has(realmId)) void detachedFromDeadline(() => this.drain(realmId));
    });
  }

  private async drain(realmId: number): Promise<void> {
    this.draining.add(realmId);
    try {
      for (;;) {
        const queue = this.queues.get(realmId);
        if (!queue || queue.length === 0) {
          this.queues.delete(realmId);
          return;
        }
        await this.write(queue.splice(0, this.deps.settings.sendBatchMax));
      }
    } finally {
      this.draining.delete(realmId);
    }
  }

  private async write(batch: Pending[]): Promise<void> {
    // Versions only grow and each was read committed, so a send checked at an older version
    // than another in the batch is stale whatever the database says now.
    const newest = Math.max(-1, ...batch.map((p) => p.send.readModelVersion ?? -1));
    const isStale = (p: Pending, current: number) => p.send.readModelVersion !== undefined && p.send.readModelVersion !== current;
    const realmId = batch[0]?.send.message.realm_id as number;
    if (newest >= 0 && batch.some((p) => isStale(p, newest))) {
      for (const p of batch.filter((x) => isStale(x, newest))) p.reject(new StaleSendContext(newest));
      batch = batch.filter((p) => !isStale(p, newest));
    }
    let outcome: BatchOutcome;
    try {
      outcome = await writeBatch(this.deps, newest >= 0 ? newest : null, batch.map((p) => p.send));
    } catch (e) {
      if (batch.length === 1) {
        batch[0]?.reject(e);
        return;
      }
      for (const p of batch) await this.write([p]);
      return;
    }
    if ('ids' in outcome) {
      const { ids } = outcome;
      batch.forEach((p, i) => p.resolve(ids[i] as number));
      return;
    }
    this.contexts.sawVersion(realmId, outcome.staleAt);
    for (const p of batch) if (p.send.readModelVersion !== undefined) p.reject(new StaleSendContext(outcome.staleAt));
    // Sends that were not checked against a version (their callers do not retry) go again.
    const unchecked = batch.filter((p) => p.send.readModelVersion === undefined);
    if (unchecked.length) await this.write(unchecked);
  }
}
