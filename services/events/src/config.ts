/** The events service's own settings (env `ZC_*`), beside the shared config. */
import { readEnv } from '@zc/shared/config';

export interface EventsConfig {
  /** Idle lifetime of a queue when /register does not ask for another (Zulip: 600 s). */
  defaultLifespanSecs: number;
  /** Upper bound of queue_lifespan_secs (Zulip: 7 days). */
  maxLifespanSecs: number;
  /** Live queues one user may hold; /register beyond it is refused. */
  maxQueuesPerUser: number;
  /** Unacknowledged events one queue may hold; beyond it the queue is dropped (the client re-registers). */
  maxEventsPerQueue: number;
  /** Bytes of unacknowledged event JSON one queue may hold; beyond it the queue is dropped too. */
  maxEventBytesPerQueue: number;
  /** How long an owning service may take to answer register_state. */
  registerStateTimeoutMs: number;
  /**
   * Leader lock lifetime. The leader renews it every second (a sixth of the default, so a
   * stall of five seconds does not cost the lock) and the others try to take it as often, so
   * a dead or paused leader is replaced within this plus a second; fencing (terms), not the
   * TTL, keeps a leader that resumes late from writing.
   */
  leaderLockMs: number;
  /** ZC_DELIVERY_TRACE: events carry their hop times (`zc_trace`), wakes when they were sent. */
  deliveryTrace: boolean;
}

/** The events service's settings from the checked environment (@zc/shared/config's schema). */
export function loadEventsConfig(env: NodeJS.ProcessEnv = process.env): EventsConfig {
  const e = readEnv(env);
  return {
    defaultLifespanSecs: e.ZC_EVENT_QUEUE_LIFESPAN_SECS,
    maxLifespanSecs: 7 * 24 * 3600,
    maxQueuesPerUser: e.ZC_MAX_QUEUES_PER_USER,
    maxEventsPerQueue: e.ZC_MAX_EVENTS_PER_QUEUE,
    maxEventBytesPerQueue: e.ZC_MAX_EVENT_BYTES_PER_QUEUE,
    registerStateTimeoutMs: e.ZC_REGISTER_STATE_TIMEOUT_MS,
    leaderLockMs: e.ZC_EVENTS_LEADER_LOCK_MS,
    deliveryTrace: e.ZC_DELIVERY_TRACE,
  };
}
