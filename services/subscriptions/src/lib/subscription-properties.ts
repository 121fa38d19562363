/**
 * Personal subscription settings a client may change (spec 4.1) and how each is checked
 * and stored. `in_home_view` is the legacy inverse of `is_muted`: it is stored as is_muted.
 */
import { badRequest } from '@zc/shared/errors';
import type { StoredProperty } from '../store/subscription-store.js';
import { isHexColor } from './colors.js';

const BOOLEAN_PROPERTIES = [
  'in_home_view',
  'is_muted',
  'pin_to_top',
  'desktop_notifications',
  'audible_notifications',
  'push_notifications',
  'email_notifications',
  'wildcard_mentions_notify',
] as const;

export type SubscriptionProperty = 'color' | (typeof BOOLEAN_PROPERTIES)[number];

export function isSubscriptionProperty(p: string): p is SubscriptionProperty {
  return p === 'color' || (BOOLEAN_PROPERTIES as readonly string[]).includes(p);
}

/** Checks the value for the property, with Zulip's validator messages (named after the property). */
export function checkPropertyValue(property: SubscriptionProperty, value: unknown): boolean | string {
  if (property === 'color') {
    if (typeof value !== 'string') throw badRequest('color is not a string');
    if (!isHexColor(value)) throw badRequest('color is not a valid hex color code');
    return value;
  }
  if (typeof value !== 'boolean') throw badRequest(`${property} is not a boolean`);
  return value;
}

/** The column and value a checked change is stored as. */
export function storedChange(property: SubscriptionProperty, value: boolean | string): { property: StoredProperty; value: boolean | string } {
  if (property === 'in_home_view') return { property: 'is_muted', value: !value };
  return { property, value };
}
