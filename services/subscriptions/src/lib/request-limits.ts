/**
 * How much one subscribe or unsubscribe call may ask for: each stream and each (stream, user)
 * pair is rows, events and read-model work in one transaction, so a single call must not be
 * able to hold the realm's locks for minutes. Bigger changes are made in several calls.
 */
import { badRequest } from '@zc/shared/errors';

export const SUBSCRIPTION_LIMITS = { streamsPerCall: 1000, principalsPerCall: 10_000, pairsPerCall: 100_000 } as const;

export function checkSubscriptionRequestSize(streams: number, principals: number): void {
  const { streamsPerCall, principalsPerCall, pairsPerCall } = SUBSCRIPTION_LIMITS;
  if (streams > streamsPerCall) throw badRequest(`Too many streams in one request: at most ${streamsPerCall}.`);
  if (principals > principalsPerCall) throw badRequest(`Too many principals in one request: at most ${principalsPerCall}.`);
  if (streams * Math.max(1, principals) > pairsPerCall) {
    throw badRequest(`Too many subscriptions in one request: at most ${pairsPerCall} stream and user pairs.`);
  }
}
