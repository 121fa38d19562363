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
 */
import { eventsInbox, messagesEvents, type MessageEventMessage } from '@zc/shared/contracts';
import { transaction } from '@zc/shared/db';
import type { EventContract, PayloadOf } from '@zc/shared/bus';
import { injectTraceHeaders } from '@zc/shared/telemetry';
import type { MessagesDeps } from '../deps.js';
import { flagNames } from '../lib/flags.js';
import { messageStore, type NewMessage } from '../store/message-store.js';

/** A send that passed every check and only lacks its id. */
export interface PreparedSend {
  message: Omit<NewMessage, 'id'>;
  /** Every user who gets the message (sender first) with their flag bits. */
  recipients: Array<{ id: number; flags: number }>;
  /** The message event's `message` without `id`, built by the check. */
  event: Omit<MessageEventMessage, 'id'>;
  senderQueueId?: string;
  localId?: string;
  idempotencyKey?: string;
}

interface Pending {
  send: PreparedSend;
  resolve(id: number): void;
  reject(e: unknown): void;
}

// Two-key advisory lock namespace of this service's per-realm send lock.
const SEND_LOCK_CLASS = 0x6d736773; // 'msgs'

/** Writes one batch in one transaction; returns each send's message id (an earlier one for a repeated idempotency key). */
async function writeBatch(deps: MessagesDeps, sends: readonly PreparedSend[]): Promise<number[]> {
  const realmId = sends[0]?.message.realm_id as number;
  return transaction(deps.pool, async (tx) => {
    const ids = await messageStore.lockRealmAndAllocateIds(tx, SEND_LOCK_CLASS, realmId, sends.length);
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
      if (s.idempotencyKey !== undefined && !claimed.has(`${s.message.sender_id}\u0000${s.idempotencyKey}`)) {
        // Sent before (or earlier in this batch): answer with that message, send nothing.
        result.push((await messageStore.findIdempotent(tx, s.message.sender_id, s.idempotencyKey)) as number);
        continue;
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
      event(eventsInbox.notify, {
        realm_id: realmId,
        users: s.recipients.map((r) => ({ id: r.id, flags: flagNames(r.flags) })),
        event: { type: 'message', message: { ...s.event, id } },
        ...(s.senderQueueId !== undefined ? { sender_queue_id: s.senderQueueId } : {}),
        ...(s.localId !== undefined ? { local_id: s.localId } : {}),
      });
      event(messagesEvents.messageSent, {
        realm_id: realmId,
        message_id: id,
        stream_id: s.message.stream_id,
        sender_id: s.message.sender_id,
        timestamp: Math.floor(s.message.date_sent.getTime() / 1000),
      });
    }
    await messageStore.insertBatch(tx, fresh.map(({ s, id }) => ({ ...s.message, id })), { userIds: umUsers, messageIds: umMessages, flags: umFlags }, outbox);
    return result;
  });
}

/** One writer per realm per replica; see the file comment. */
export class SendWriter {
  private readonly queues = new Map<number, Pending[]>();
  private readonly draining = new Set<number>();

  constructor(private readonly deps: MessagesDeps) {}

  /** Resolves with the message id once the message is committed. */
  submit(send: PreparedSend): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      const realmId = send.message.realm_id;
      const queue = this.queues.get(realmId) ?? [];
      queue.push({ send, resolve, reject });
      this.queues.set(realmId, queue);
      if (!this.draining.has(realmId)) void this.drain(realmId);
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
    try {
      const ids = await writeBatch(this.deps, batch.map((p) => p.send));
      batch.forEach((p, i) => p.resolve(ids[i] as number));
    } catch (e) {
      if (batch.length === 1) {
        batch[0]?.reject(e);
        return;
      }
      for (const p of batch) await this.write([p]);
    }
  }
}
