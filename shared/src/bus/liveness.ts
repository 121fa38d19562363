/**
 * Which replicas of each service are alive, from the beat every serving Bus publishes once a
 * second (`<prefix>.bus.alive`, core NATS). A caller sends requests straight to a replica
 * heard within the last beats (`<subject>.<replica>`), so a paused or stalled one stops
 * getting requests within seconds, while the NATS server keeps routing the queue group's
 * requests to it until it notices (minutes for a SIGSTOPped process: its socket stays open);
 * and it stops waiting for a request held by a replica that fell silent (killed, paused).
 */

export const ALIVE_EVERY_MS = 1_000;
/**
 * Silence after which a replica holding a request counts as gone: four beats, so a replica
 * whose event loop lags a second or two under load is not given up on.
 */
export const SILENT_AFTER_MS = 4 * ALIVE_EVERY_MS;
/** New requests go only to replicas heard this recently (two beats and a half). */
export const FRESH_MS = 2.5 * ALIVE_EVERY_MS;
/** Replicas not heard for this long are forgotten (each start brings a new name). */
const FORGET_AFTER_MS = 60_000;

export interface Beat {
  replica: string;
  services: string[];
}

export class Liveness {
  /** service → replica → last heard. */
  private readonly heard = new Map<string, Map<string, number>>();
  private lastSweep: number;

  constructor(private readonly now: () => number = Date.now) {
    this.lastSweep = now();
  }

  beat(b: Beat): void {
    const now = this.now();
    for (const s of b.services) {
      let m = this.heard.get(s);
      if (!m) this.heard.set(s, (m = new Map()));
      m.set(b.replica, now);
    }
    if (now - this.lastSweep > FORGET_AFTER_MS) {
      this.lastSweep = now;
      for (const m of this.heard.values()) for (const [r, at] of m) if (now - at > FORGET_AFTER_MS) m.delete(r);
    }
  }

  /** Replicas of `service` heard within FRESH_MS, other than those in `avoid`. */
  fresh(service: string, avoid: ReadonlySet<string>): string[] {
    const m = this.heard.get(service);
    if (!m) return [];
    const now = this.now();
    const out: string[] = [];
    for (const [r, at] of m) if (!avoid.has(r) && now - at < FRESH_MS) out.push(r);
    return out;
  }

  /**
   * Whether `replica`, holding a request since `since`, still looks alive. One never heard of
   * (it does not beat: an older build) cannot be judged and is waited for.
   */
  isAlive(service: string, replica: string, since: number): boolean {
    const at = this.heard.get(service)?.get(replica);
    if (at === undefined) return true;
    return this.now() - Math.max(at, since) < SILENT_AFTER_MS;
  }

  /** `replica` had no subscription left (no responders): it is gone. */
  forget(service: string, replica: string): void {
    this.heard.get(service)?.delete(replica);
  }
}
