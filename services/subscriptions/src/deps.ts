import { readEnv, type SharedConfig } from '@zc/shared/config';
import type { Bus } from '@zc/shared/bus';
import type { Directory } from '@zc/shared/directory';
import type { Pool } from '@zc/shared/db';
import type { Logger } from '@zc/shared/logging';

/** Settings of this service beyond the shared ones. */
export interface SubscriptionsSettings {
  /**
   * Zulip's WEB_PUBLIC_STREAMS_ENABLED server setting: without it no stream can be made
   * web-public, whatever the realm says. Off unless ZC_WEB_PUBLIC_STREAMS_ENABLED=true.
   */
  webPublicStreamsEnabled: boolean;
  /** Whether a new realm gets its "general" default stream (SharedConfig.newRealmStreams). */
  newRealmStreams: boolean;
}

export function loadSubscriptionsSettings(config: Pick<SharedConfig, 'newRealmStreams'>, env = process.env): SubscriptionsSettings {
  return { webPublicStreamsEnabled: readEnv(env).ZC_WEB_PUBLIC_STREAMS_ENABLED, newRealmStreams: config.newRealmStreams };
}

/** Everything the subscriptions service's actions and queries need, built once at start. */
export interface SubscriptionsDeps {
  pool: Pool;
  bus: Bus;
  log: Logger;
  settings: SubscriptionsSettings;
  /** This service's copy of the realm/user directory (schema `subscriptions`). */
  directory: Directory;
}

/** The schema this service owns; also the name its outbox rows are written under. */
export const SCHEMA = 'subscriptions';
