import type { Bus } from '@zc/shared/bus';
import type { Directory } from '@zc/shared/directory';
import { readEnv, type SharedConfig } from '@zc/shared/config';
import type { Pool } from '@zc/shared/db';
import type { Logger } from '@zc/shared/logging';
import type { LocalOutboxWake } from '@zc/shared/outbox';
import type { RenderContextCache } from './actions/render-context.js';
import type { TypingExpiry } from './typing/expiry.js';

/** Settings of the messages service beyond the shared ones. */
export interface MessagesConfig {
  /** POST /mark_all_as_read stops with partially_completed after this long (spec 4.3). */
  markAllAsReadTimeLimitMs: number;
  /** Rows marked read per batch of mark_all_as_read (newest first). */
  markAllAsReadBatchSize: number;
  /** POST /streams/{id}/delete_topic stops with partially_completed after this long. */
  deleteTopicTimeLimitMs: number;
  /** Messages deleted per transaction of delete_topic (Zulip's RETENTION_STREAM_MESSAGE_BATCH_SIZE). */
  deleteTopicBatchSize: number;
  /** At most this many sends share one transaction (actions/send-writer.ts). */
  sendBatchMax: number;
  /** Ids in a keyword search's first window (queries/get-messages.ts); each next one is four times wider. */
  searchWindowIds: number;
  /** The server sends a typing stop this long after a start that was neither renewed nor stopped. */
  typingStartedExpiryMs: number;
}

/** The messages service's settings from the checked environment (@zc/shared/config's schema). */
export function loadMessagesConfig(env = process.env): MessagesConfig {
  const e = readEnv(env);
  return {
    markAllAsReadTimeLimitMs: e.ZC_MARK_ALL_AS_READ_TIME_LIMIT_MS,
    markAllAsReadBatchSize: e.ZC_MARK_ALL_AS_READ_BATCH_SIZE,
    deleteTopicTimeLimitMs: e.ZC_DELETE_TOPIC_TIME_LIMIT_MS,
    deleteTopicBatchSize: e.ZC_DELETE_TOPIC_BATCH_SIZE,
    sendBatchMax: e.ZC_SEND_BATCH_MAX,
    searchWindowIds: e.ZC_SEARCH_WINDOW_IDS,
    typingStartedExpiryMs: e.ZC_TYPING_STARTED_EXPIRY_MS,
  };
}

/** Everything the messages service's actions and queries need, built once at start. */
export interface MessagesDeps {
  pool: Pool;
  bus: Bus;
  config: SharedConfig;
  settings: MessagesConfig;
  log: Logger;
  /** The renderer's per-realm lookups, cached in memory (actions/render-context.ts). */
  render: RenderContextCache;
  /** Pending server-sent typing stops (Redis); absent where no Redis is configured (some tests). */
  typingExpiry?: TypingExpiry;
  /** This service's copy of the realm/user directory (schema `messages`). */
  directory: Directory;
  /** The outbox relay of this replica: a send written while it leads wakes it without a NOTIFY (absent: always NOTIFY). */
  outbox?: LocalOutboxWake;
}
