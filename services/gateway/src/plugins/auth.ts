/**
 * HTTP Basic authentication (email + API key) checked by the users service, with a short-
 * lived per-replica cache. A cached key is trusted only while the user's and realm's
 * credential tokens in Redis are those it was checked under; the users service replaces them
 * before answering a call that revokes or changes credentials, so the old key is refused by
 * every replica once that call has answered (measured cost: docs/SECURITY.md). Failed
 * authentications are throttled per client address.
 */
import { hash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { subdomainOfHost } from '@zc/shared/config';
import { users, usersEvents, type Actor } from '@zc/shared/contracts';
import { AppError, isAppError } from '@zc/shared/errors';
import type { Param, ParamValues } from '@zc/shared/params';
import { RedisBatch, credentialTokenKey, redisKey } from '@zc/shared/redis';
import { DECLINE } from '../lib/fast-lane.js';
import { queueWindowCheck, windowState, type WindowState } from '../lib/sliding-window.js';
import { params } from './params.js';
import { RATE_WINDOW_MS, rateLimitHit, userRateKey, windowHeaders } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    actor: Actor;
    clientName: string;
    /** A cached key's credential check left to the route (`credentialsCheckedByRoute`), until it takes it. */
    credentialCheck: CredentialCheck | null;
  }
  interface FastifyContextConfig {
    /** Routes that need no credentials set this to false. */
    auth?: boolean;
    /**
     * The route checks a cached key's credential tokens itself, inside the Redis script that
     * does its work (`takeCredentialCheck`), so that its one round trip also authenticates.
     */
    credentialsCheckedByRoute?: boolean;
  }
}

/**
 * The credential check of a request whose key came from the cache, left to its route: the
 * route's Redis script compares `keys` with `tokens` before doing anything and does nothing
 * when one differs, and the route then calls `recheck`. A route path without such a script
 * calls `verify` first.
 */
export interface CredentialCheck {
  /** Redis keys of the user's and the realm's credential tokens (shared redis/credentials.ts). */
  keys: [string, string];
  /** The tokens the cached key was checked under ('' for none). */
  tokens: [string, string];
  /** Checks the key with the users service again (the tokens moved): the fresh actor, or the refusal thrown. */
  recheck(): Promise<Actor>;
  /** Checks the tokens by themselves (one MGET), re-checking the key if they moved: the actor to act as. */
  verify(): Promise<Actor>;
}

/**
 * The request's pending credential check, which the route now owns (null when the key was
 * checked already). Every path of the route must either pass it to a script that compares the
 * tokens or call `verify` before acting.
 */
export function takeCredentialCheck(request: FastifyRequest): CredentialCheck | null {
  const check = request.credentialCheck;
  request.credentialCheck = null;
  return check;
}

/**
 * The request's parameters (`params`) for a route holding a pending credential check: when
 * they are refused, the check is made first, so that a key whose credentials moved is refused
 * as such, whatever else is wrong with the request.
 */
export async function paramsCheckingCredentials<S extends Record<string, Param<unknown>>>(
  request: FastifyRequest,
  specs: S,
  check: CredentialCheck | null,
): Promise<ParamValues<S>> {
  try {
    return params(request, specs);
  } catch (e) {
    await check?.verify();
    throw e;
  }
}

const notLoggedIn = () => new AppError(null, 'Not logged in: API authentication or user session required', 401);
const badHeader = () => new AppError('BAD_REQUEST', 'Invalid authorization header for basic auth', 401);

function parseBasic(header: string): { email: string; apiKey: string } {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!m) throw badHeader();
  const decoded = Buffer.from(m[1] as string, 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i <= 0) throw badHeader();
  return { email: decoded.slice(0, i), apiKey: decoded.slice(i + 1) };
}

/** Zulip's client name: the User-Agent's first word before `/`, or `Unspecified`. */
export function clientNameOf(request: FastifyRequest): string {
  const ua = request.headers['user-agent'];
  if (!ua) return 'Unspecified';
  const m = /^([^/ ]*[^0-9/(]*)/.exec(ua);
  const name = (m?.[1] ?? '').trim();
  return name === '' ? 'Unspecified' : name.slice(0, 30);
}

/** The credential tokens the users service saw before the row it checked (shared redis/credentials.ts). */
export interface CredentialTokens {
  user: string | null;
  realm: string | null;
}

interface CacheEntry {
  actor: Actor;
  tokens: CredentialTokens;
  expires: number;
}

export class AuthCache {
  private readonly entries = new Map<string, CacheEntry>();
  /** Digest of (subdomain, raw Authorization header) → that header's entry key; see `headerKey`. */
  private readonly headerKeys = new Map<string, string>();
  constructor(private readonly ttlMs: number, private readonly maxEntries = 100_000) {}

  key(subdomain: string, email: string, apiKey: string): string {
    // One-shot hashing: a Hash object per request cost more than the digest (every request looks its key up here).
    return `${subdomain}\n${email.toLowerCase()}\n${hash('sha256', apiKey, 'base64')}`;
  }

  /**
   * The entry key of a request's Authorization header, with the credentials when the header
   * had to be decoded (it had not been seen; throws as `parseBasic` for a malformed one).
   * Every request looks its key up, and a header seen before is found by one digest of it
   * instead of being decoded (regex, base64, lower-casing, and the key's own digest): 1.2 µs
   * against 3.7 per request on the 2-core machine. Remembered by digest, not by the header
   * itself, so that no API key is kept in memory; a header always names the same key, so what
   * is remembered never goes stale, whatever happens to the entry.
   */
  headerKey(subdomain: string, header: string): { key: string; credentials?: { email: string; apiKey: string } } {
    const digest = hash('sha256', `${subdomain}\n${header}`, 'base64');
    const known = this.headerKeys.get(digest);
    if (known !== undefined) return { key: known };
    const credentials = parseBasic(header);
    const key = this.key(subdomain, credentials.email, credentials.apiKey);
    if (this.ttlMs > 0) {
      if (this.headerKeys.size >= this.maxEntries) this.headerKeys.delete(this.headerKeys.keys().next().value as string);
      this.headerKeys.set(digest, key);
    }
    return { key, credentials };
  }
  get(key: string): { actor: Actor; tokens: CredentialTokens } | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expires < Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e;
  }
  set(key: string, actor: Actor, tokens: CredentialTokens = { user: null, realm: null }): void {
    if (this.ttlMs <= 0) return;
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { actor, tokens, expires: Date.now() + this.ttlMs });
  }
  delete(key: string): void {
    this.entries.delete(key);
  }
  dropUser(userId: number): void {
    for (const [k, e] of this.entries) if (e.actor.user_id === userId) this.entries.delete(k);
  }
  dropRealm(realmId: number): void {
    for (const [k, e] of this.entries) if (e.actor.realm_id === realmId) this.entries.delete(k);
  }
}

const sameTokens = (a: CredentialTokens, b: CredentialTokens) => a.user === b.user && a.realm === b.realm;

export default fp(
  async (app: FastifyInstance) => {
    const { bus, config, gateway, redis } = app.deps;
    const prefix = config.redisPrefix;
    const cache = new AuthCache(gateway.authCacheTtlMs);
    // Requests arriving together (every long-poll of a stream re-polls after a message) check
    // their tokens in one Redis pipeline rather than one round trip each.
    const batch = new RedisBatch(redis);
    // Core-NATS subscriptions (not queue groups): entries of changed users are dropped early
    // to free memory; correctness comes from the credential tokens checked on every request.
    const stopInvalidations = bus.listen([usersEvents.userUpdated, usersEvents.apiKeyChanged, usersEvents.realmUpdated], (...[subject, payload]) => {
      if (subject === usersEvents.realmUpdated.subject) cache.dropRealm(payload.realm_id);
      else cache.dropUser(payload.user_id);
    });
    app.addHook('onClose', async () => stopInvalidations());

    const failureKey = (ip: string) => redisKey(prefix, 'authfail', ip);
    const failureLimit = gateway.authFailuresPerIpPerMinute;

    /**
     * A cached actor is used only while the user's and realm's credential tokens are the ones
     * it was cached under: one Redis round trip, which also makes the user's rate-limit check.
     */
    async function stillValid(request: FastifyRequest, cached: { actor: Actor; tokens: CredentialTokens }): Promise<boolean> {
      const state = await tokensAndWindow(cached);
      if (state === false) return false;
      request.rateLimitState = state;
      return true;
    }

    /**
     * One round trip: the cached key's tokens compared and, with per-user rate limiting on, the
     * request counted. false when the tokens moved; else the window's state (null: no limit).
     */
    async function tokensAndWindow(cached: { actor: Actor; tokens: CredentialTokens }): Promise<false | WindowState | null> {
      const limit = gateway.rateLimitPerMinute;
      const results = await batch.run((pipeline) => {
        pipeline.mget(credentialTokenKey(prefix, 'user', cached.actor.user_id), credentialTokenKey(prefix, 'realm', cached.actor.realm_id));
        if (limit > 0) queueWindowCheck(pipeline, userRateKey(prefix, cached.actor.user_id), limit, RATE_WINDOW_MS);
      });
      const failed = results.find(([err]) => err);
      if (failed) throw failed[0] as Error;
      const [user = null, realm = null] = results[0]?.[1] as Array<string | null>;
      if (!sameTokens(cached.tokens, { user, realm })) return false;
      return limit > 0 ? windowState(results[1]?.[1], limit, RATE_WINDOW_MS) : null;
    }

    /** Failed authentications are counted per client address; past the limit none is checked. */
    async function refuseIfFailingTooOften(ip: string): Promise<void> {
      if (failureLimit <= 0) return;
      const pipeline = redis.pipeline();
      queueWindowCheck(pipeline, failureKey(ip), failureLimit, RATE_WINDOW_MS, 'peek');
      const [[err, raw] = [null, null]] = (await pipeline.exec()) ?? [];
      if (err) throw err;
      const state = windowState(raw, failureLimit, RATE_WINDOW_MS);
      if (!state.allowed) throw rateLimitHit(state.retryAfterSeconds);
    }

    async function countFailure(ip: string): Promise<void> {
      if (failureLimit <= 0) return;
      const pipeline = redis.pipeline();
      queueWindowCheck(pipeline, failureKey(ip), failureLimit, RATE_WINDOW_MS);
      await pipeline.exec();
    }

    /** The caller's actor: at once when the route checks a cached key itself, else once checked. */
    function authenticate(request: FastifyRequest, header: string): Actor | Promise<Actor> {
      const subdomain = subdomainOfHost(config, request.headers.host);
      let found: ReturnType<AuthCache['headerKey']>;
      try {
        found = cache.headerKey(subdomain, header);
      } catch (e) {
        return refuseMalformed(request.ip, e);
      }
      const { key } = found;
      const cached = cache.get(key);
      // A header found by its digest was decoded once already, so decoding it again cannot fail.
      const afresh = () => checkWithUsersService(request, subdomain, found.credentials ?? parseBasic(header), key);
      if (!cached) return afresh();
      // With per-user rate limiting on, the window check needs its round trip here anyway, and the tokens ride along.
      if (request.routeOptions.config?.credentialsCheckedByRoute && gateway.rateLimitPerMinute <= 0) {
        request.credentialCheck = deferredCheck(request, cached, key, afresh);
        return cached.actor;
      }
      return checkCached(request, cached, key, afresh);
    }

    async function refuseMalformed(ip: string, e: unknown): Promise<never> {
      await refuseIfFailingTooOften(ip);
      await countFailure(ip);
      throw e;
    }

    async function checkCached(request: FastifyRequest, cached: { actor: Actor; tokens: CredentialTokens }, key: string, afresh: () => Promise<Actor>): Promise<Actor> {
      if (await stillValid(request, cached)) return cached.actor;
      cache.delete(key);
      return afresh();
    }

    /** What a route's script compares before acting, for a key cached under `cached.tokens`. */
    function tokensToCompare(cached: { actor: Actor; tokens: CredentialTokens }): Pick<CredentialCheck, 'keys' | 'tokens'> {
      return {
        keys: [credentialTokenKey(prefix, 'user', cached.actor.user_id), credentialTokenKey(prefix, 'realm', cached.actor.realm_id)],
        tokens: [cached.tokens.user ?? '', cached.tokens.realm ?? ''],
      };
    }

    function deferredCheck(request: FastifyRequest, cached: { actor: Actor; tokens: CredentialTokens }, key: string, afresh: () => Promise<Actor>): CredentialCheck {
      const recheck = async () => {
        cache.delete(key);
        return (request.actor = await afresh());
      };
      return {
        ...tokensToCompare(cached),
        recheck,
        verify: async () => ((await stillValid(request, cached)) ? cached.actor : recheck()),
      };
    }

    async function checkWithUsersService(request: FastifyRequest, subdomain: string, credentials: { email: string; apiKey: string }, key: string): Promise<Actor> {
      await refuseIfFailingTooOften(request.ip);
      try {
        const r = await bus.request(users.authenticate, { realm_subdomain: subdomain, email: credentials.email, api_key: credentials.apiKey });
        cache.set(key, r.actor, r.credential_tokens);
        return r.actor;
      } catch (e) {
        if (isAppError(e) && e.httpStatus === 401) await countFailure(request.ip);
        throw e;
      }
    }

    // The fast lane's requests: only a cached key whose tokens its route's script compares, on
    // the same condition as credentialsCheckedByRoute above; else Fastify's path. When the
    // tokens moved the route gives the request to Fastify before acting, and this plugin then
    // checks the key afresh.
    app.lane.authenticate = (host, authorization) => {
      let key: string;
      try {
        key = cache.headerKey(subdomainOfHost(config, host), authorization).key;
      } catch {
        return undefined;
      }
      const cached = cache.get(key);
      if (!cached) return undefined;
      return { actor: cached.actor, ...tokensToCompare(cached) };
    };
    // With per-user rate limiting on, a lane request is counted as Fastify's path counts it: the
    // cached key's tokens and the window check in one round trip (stillValid), before the route
    // acts. Tokens that moved send the request down Fastify's path, which checks the key afresh
    // and counts it once more (a key change is rare; a request counted twice then is harmless).
    if (gateway.rateLimitPerMinute > 0) {
      app.lane.admit = async ({ actor, tokens: [user, realm] }) => {
        const state = await tokensAndWindow({ actor, tokens: { user: user || null, realm: realm || null } });
        if (state === false) return DECLINE;
        const window = state as WindowState;
        return { headers: windowHeaders(window), refusal: window.allowed ? undefined : rateLimitHit(window.retryAfterSeconds) };
      };
    }

    app.decorateRequest('actor', null as unknown as Actor);
    // Read by a few routes only (a send, /register): worked out from the User-Agent when asked, not for every poll and ping.
    app.decorateRequest('clientName', {
      getter(this: FastifyRequest) {
        return clientNameOf(this);
      },
    });
    app.decorateRequest('credentialCheck', null);
    // A callback hook: a steady presence ping (its key cached, checked by its route) goes on without a promise.
    app.addHook('onRequest', (request, _reply, done) => {
      if (request.routeOptions.config?.auth === false || !request.routeOptions.url) return done();
      const header = request.headers.authorization;
      if (!header) throw notLoggedIn();
      const actor = authenticate(request, header);
      if (!(actor instanceof Promise)) {
        request.actor = actor;
        return done();
      }
      actor.then((a) => {
        request.actor = a;
        done();
      }, done);
    });
  },
  { name: 'auth', dependencies: ['rate-limit'] },
);
