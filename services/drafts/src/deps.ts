import type { Bus } from '@zc/shared/bus';
import type { Pool } from '@zc/shared/db';
import type { Logger } from '@zc/shared/logging';
import { draftStore, type DraftStore } from './store/draft-store.js';

/** Everything the drafts service's actions and queries need, built once at start. */
export interface DraftsDeps {
  pool: Pool;
  bus: Bus;
  log: Logger;
  store: DraftStore;
  /** Seconds since the epoch; tests may fix it. */
  now(): number;
}

export function makeDeps(p: { pool: Pool; bus: Bus; log: Logger; now?: () => number }): DraftsDeps {
  return { store: draftStore, now: () => Date.now() / 1000, ...p };
}
