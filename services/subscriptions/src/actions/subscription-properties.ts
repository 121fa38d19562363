/**
 * POST /users/me/subscriptions/properties (spec 4.1). Every change is checked before any is
 * applied, so a request with one bad entry changes nothing (Zulip applies the entries before
 * the bad one; we prefer all or nothing).
 */
import { subscriptionsEvents, type Actor } from '@zc/shared/contracts';
import { transaction } from '@zc/shared/db';
import { badRequest } from '@zc/shared/errors';
import type { SubscriptionsDeps } from '../deps.js';
import { subscriptionUpdateEvent } from '../lib/client-events.js';
import { invalidStreamId } from '../lib/errors.js';
import { canAccessStream } from '../lib/policy.js';
import { checkPropertyValue, isSubscriptionProperty, storedChange } from '../lib/subscription-properties.js';
import { streamStore } from '../store/stream-store.js';
import { subscriptionStore, type StoredProperty } from '../store/subscription-store.js';
import { emitDomainEvent, notifyUsers } from './outbox.js';

export interface PropertyChange {
  stream_id: number;
  property: string;
  value: boolean | string;
}

interface CheckedChange {
  stream_id: number;
  property: StoredProperty;
  value: boolean | string;
}

export async function checkUpdateSubscriptionProperties(deps: SubscriptionsDeps, actor: Actor, changes: readonly PropertyChange[]): Promise<void> {
  const checked: CheckedChange[] = [];
  for (const c of changes) {
    if (!isSubscriptionProperty(c.property)) throw badRequest(`Unknown subscription property: ${c.property}`);
    const stream = await streamStore.findById(deps.pool, actor.realm_id, c.stream_id);
    const sub = stream && (await subscriptionStore.find(deps.pool, actor.user_id, stream.id));
    const subscribed = sub?.active === true;
    if (!stream || !canAccessStream(actor.role, stream, subscribed)) throw invalidStreamId();
    if (!subscribed) throw badRequest(`Not subscribed to channel ID ${c.stream_id}`);
    checked.push({ stream_id: c.stream_id, ...storedChange(c.property, checkPropertyValue(c.property, c.value)) });
  }

  await transaction(deps.pool, async (tx) => {
    for (const c of checked) {
      await subscriptionStore.setProperty(tx, actor.user_id, c.stream_id, c.property, c.value);
      await emitDomainEvent(tx, subscriptionsEvents.subscriptionUpdated, {
        realm_id: actor.realm_id,
        stream_id: c.stream_id,
        user_id: actor.user_id,
        property: c.property,
        value: c.value,
      });
      // Feature level 139: muting sends the legacy in_home_view event, then is_muted.
      if (c.property === 'is_muted') {
        await notifyUsers(tx, actor.realm_id, [actor.user_id], subscriptionUpdateEvent(c.stream_id, 'in_home_view', !c.value));
      }
      await notifyUsers(tx, actor.realm_id, [actor.user_id], subscriptionUpdateEvent(c.stream_id, c.property, c.value));
    }
  });
}
