/**
 * How much one subscribe or unsubscribe call may ask for: each stream and each (stream, user)
 * pair is rows, events and read-model work in one transaction, so a single call must not be
 * able to hold the realm's locks for minutes. Bigger changes are made in several calls.
 */
import { badRequest } from '@zc/shared/errors';

/**
 * Pairs: a call must commit well within the gateway's 10 s request timeout, or its caller is
 * told 503 while it still commits. Measured (test/src/e2e/subscriptions-bulk-create.test.ts,
 * 1,000 new streams): 10 users (10,000 pairs) 2.2 s, 20 users 7.3 s, 100 users 22 s; each new
 * pair's add event lists the stream's subscribers, so the cost grows faster than the pairs.
 */
export const SUBSCRIPTION_LIMITS = { streamsPerCall: 1000, principalsPerCall: 10_000, pairsPerCall: 10_000 } as const;

export function checkSubscriptionRequestSize(streams: number, principals: number): void {
  const { streamsPerCall, principalsPerCall, pairsPerCall } = SUBSCRIPTION_LIMITS;
  if (streams > streamsPerCall) throw badRequest(`Too many streams in one request: at most ${streamsPerCall}.`);
  if (principals > principalsPerCall) throw badRequest(`Too many principals in one request: at most ${principalsPerCall}.`);
  if (streams * Math.max(1, principals) > pairsPerCall) {
    throw badRequest(`Too many subscriptions in one request: at most ${pairsPerCall} stream and user pairs.`);
  }
}
