/**
 * HTTP Basic authentication (email + API key) checked by the users service, with a short-
 * lived per-replica cache. The users service's events (key changed, user or realm updated)
 * drop cached entries on every replica, so a revoked key stops working at once.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { subdomainOfHost } from '@zc/shared/config';
import { users, usersEvents, type Actor } from '@zc/shared/contracts';
import { AppError } from '@zc/shared/errors';

declare module 'fastify' {
  interface FastifyRequest {
    actor: Actor;
    clientName: string;
  }
  interface FastifyContextConfig {
    /** Routes that need no credentials set this to false. */
    auth?: boolean;
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

interface CacheEntry {
  actor: Actor;
  expires: number;
}

export class AuthCache {
  private readonly entries = new Map<string, CacheEntry>();
  constructor(private readonly ttlMs: number, private readonly maxEntries = 100_000) {}

  key(subdomain: string, email: string, apiKey: string): string {
    return `${subdomain}\n${email.toLowerCase()}\n${createHash('sha256').update(apiKey).digest('base64')}`;
  }
  get(key: string): Actor | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expires < Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e.actor;
  }
  set(key: string, actor: Actor): void {
    if (this.ttlMs <= 0) return;
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { actor, expires: Date.now() + this.ttlMs });
  }
  dropUser(userId: number): void {
    for (const [k, e] of this.entries) if (e.actor.user_id === userId) this.entries.delete(k);
  }
  dropRealm(realmId: number): void {
    for (const [k, e] of this.entries) if (e.actor.realm_id === realmId) this.entries.delete(k);
  }
}

export default fp(
  async (app: FastifyInstance) => {
    const { bus, config, gateway } = app.deps;
    const cache = new AuthCache(gateway.authCacheTtlMs);
    // Core-NATS subscriptions (not queue groups): every replica must see every invalidation.
    const stopInvalidations = bus.listen([usersEvents.userUpdated, usersEvents.apiKeyChanged, usersEvents.realmUpdated], (...[subject, payload]) => {
      if (subject === usersEvents.realmUpdated.subject) cache.dropRealm(payload.realm_id);
      else cache.dropUser(payload.user_id);
    });
    app.addHook('onClose', async () => stopInvalidations());

    app.decorateRequest('actor', null as unknown as Actor);
    app.decorateRequest('clientName', '');
    app.addHook('onRequest', async (request) => {
      request.clientName = clientNameOf(request);
      if (request.routeOptions.config?.auth === false || !request.routeOptions.url) return;
      const header = request.headers.authorization;
      if (!header) throw notLoggedIn();
      const { email, apiKey } = parseBasic(header);
      const subdomain = subdomainOfHost(config, request.headers.host);
      const key = cache.key(subdomain, email, apiKey);
      let actor = cache.get(key);
      if (!actor) {
        ({ actor } = await bus.request(users.authenticate, { realm_subdomain: subdomain, email, api_key: apiKey }));
        cache.set(key, actor);
      }
      request.actor = actor;
    });
  },
  { name: 'auth', dependencies: [] },
);
