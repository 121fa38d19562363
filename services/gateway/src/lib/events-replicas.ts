/**
 * Which events replicas are alive, from their `eventsAlive` beats (one a second each). The
 * GET /events route sends each poll to a replica heard recently, and asks about the replica
 * holding a parked poll: one silent for a few beats is paused, dead or cut off, and the poll
 * is asked again elsewhere.
 */
import type { Bus } from '@zc/shared/bus';
import { EVENTS_ALIVE_EVERY_MS, eventsAlive } from '@zc/shared/contracts';

/**
 * Silence after which a replica counts as gone: four beats, so a replica whose event loop
 * lags a second or two under load is not given up on (that would only cost a re-sent poll).
 */
export const REPLICA_SILENT_AFTER_MS = 4 * EVENTS_ALIVE_EVERY_MS;
/**
 * Polls go straight to a replica heard this recently (two beats and a half): one that has just
 * fallen silent (paused, cut off) stops getting new polls at once, while the NATS server may
 * still route the queue group's requests to it for many seconds.
 */
const FRESH_MS = 2.5 * EVENTS_ALIVE_EVERY_MS;
/** Replicas not heard for this long are forgotten (each restart brings a new name). */
const FORGET_AFTER_MS = 10 * 60_000;

export class EventsReplicas {
  private readonly lastHeard = new Map<string, number>();
  private lastSweep = Date.now();

  constructor(private readonly now: () => number = Date.now) {}

  /** Starts hearing the beats; returns a function that stops. */
  listen(bus: Bus): () => void {
    return bus.listen([eventsAlive], (_subject, b) => this.heard(b.replica));
  }

  heard(replica: string): void {
    const now = this.now();
    this.lastHeard.set(replica, now);
    if (now - this.lastSweep > FORGET_AFTER_MS) {
      this.lastSweep = now;
      for (const [r, at] of this.lastHeard) if (now - at > FORGET_AFTER_MS) this.lastHeard.delete(r);
    }
  }

  /**
   * Whether `replica`, which took a request at `since`, has been heard recently. The time it
   * took the request counts as hearing it: a replica just started may not have beaten yet.
   */
  isAlive(replica: string, since: number): boolean {
    const last = Math.max(this.lastHeard.get(replica) ?? 0, since);
    return this.now() - last < REPLICA_SILENT_AFTER_MS;
  }

  /**
   * A replica to send a poll to: one at random among those heard within the last beats, other
   * than `avoid` (the one that just failed). Undefined when there is none: the queue group decides.
   */
  pick(avoid?: string): string | undefined {
    const now = this.now();
    const fresh = [...this.lastHeard].filter(([r, at]) => r !== avoid && now - at < FRESH_MS).map(([r]) => r);
    return fresh.length === 0 ? undefined : fresh[Math.floor(Math.random() * fresh.length)];
  }

  /** `replica` did not answer at all (no responder): it is gone. */
  forget(replica: string): void {
    this.lastHeard.delete(replica);
  }

  /** Replicas heard from (tests, metrics). */
  get size(): number {
    return this.lastHeard.size;
  }
}
