/**
 * Short-lived signed tokens: what a NATS answer hands the gateway (or a client, for
 * temporary URLs) so that an HTTP request to an uploads replica carries its permission with
 * it. HMAC-SHA256 over the JSON claims, keyed by a key derived from the shared secret. Pure.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export type TokenKey = Buffer;

/** A key for one purpose, so a token made for one use is never accepted for another. */
export function tokenKey(secretHex: string, purpose: string): TokenKey {
  return createHmac('sha256', Buffer.from(secretHex, 'hex')).update(`zc-uploads:${purpose}`).digest();
}

/** Signs `claims` to expire `ttlSeconds` after `nowSeconds`. */
export function signToken(key: TokenKey, claims: Record<string, unknown>, ttlSeconds: number, nowSeconds: number): string {
  const body = Buffer.from(JSON.stringify({ ...claims, exp: Math.floor(nowSeconds) + ttlSeconds })).toString('base64url');
  return `${body}.${createHmac('sha256', key).update(body).digest('base64url')}`;
}

/** The claims of a valid, unexpired token; undefined for anything else. */
export function verifyToken(key: TokenKey, token: string, nowSeconds: number): Record<string, unknown> | undefined {
  const [body, mac, extra] = token.split('.');
  if (!body || !mac || extra !== undefined) return undefined;
  const expected = createHmac('sha256', key).update(body).digest();
  const given = Buffer.from(mac, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  try {
    const claims: unknown = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    if (!claims || typeof claims !== 'object') return undefined;
    const exp = (claims as { exp?: unknown }).exp;
    if (typeof exp !== 'number' || exp < nowSeconds) return undefined;
    return claims as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
