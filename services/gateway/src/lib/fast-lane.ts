/**
 * The gateway's fast lane (issue 14): the most frequent requests, in their plain form, are
 * answered straight from Node's HTTP request, in front of Fastify. The long-poll GET /events
 * is most of the gateway's traffic under load (one request per delivered event), and
 * Fastify's routing, hooks, parameter plugins and reply machinery cost more CPU than its
 * own work (one Redis script), on the same event loop as every send.
 *
 * A lane route takes a request only when nothing about it needs Fastify: parameters of the
 * route's own names in plain characters (so parsing them here and in Fastify cannot differ,
 * and they are well-formed text), in the query string of a GET or the short urlencoded body
 * of a POST (no query string then), and an API key the auth plugin has cached and lets the
 * route check itself (`credentialsCheckedByRoute`). Everything else (a refusal to explain, an
 * unknown parameter, a key to check with the users service, a gateway shutting down) goes
 * down Fastify's path, which answers every case, so the two cannot disagree about errors. A
 * route may also give a request back to Fastify after looking at it, as long as it has
 * changed nothing. A POST's body is read before its parameters can be looked at, so Fastify
 * gets the bytes read instead of the spent stream (`payload`, the route's preParsing hook).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { Actor } from '@zc/shared/contracts';
import { errorBody } from '@zc/shared/envelope';
import { asOutage, internalError, isAppError, type AppError } from '@zc/shared/errors';
import type { Logger } from '@zc/shared/logging';
import { nameServerSpan, telemetryStarted } from '@zc/shared/telemetry';

/** What a lane route answers to hand the request to Fastify instead (it has done nothing). */
export const DECLINE = Symbol('decline');

export interface LaneRequest {
  req: IncomingMessage;
  res: ServerResponse;
  /** The parameters (a GET's query string, a POST's body), each once, all of them names the route declared. */
  params: Record<string, string>;
  /**
   * The key's credentials as cached: the route's Redis script must compare `keys` with
   * `tokens` before acting, and the route give the request to Fastify when one differs.
   */
  credentials: LaneCredentials;
}

export interface LaneCredentials {
  actor: Actor;
  /** Redis keys of the user's and the realm's credential tokens (shared redis/credentials.ts). */
  keys: [string, string];
  /** The tokens the cached key was checked under ('' for none). */
  tokens: [string, string];
}

export interface LaneAnswer {
  /** A success envelope's JSON text, or its UTF-8 bytes. */
  body: string | Buffer;
  headers?: Record<string, string>;
}

export type LaneHandler = (r: LaneRequest) => Promise<LaneAnswer | typeof DECLINE>;

/** The auth plugin's cached-key path: the actor and the check left to the route, or undefined (Fastify's path). */
export type LaneAuthenticate = (host: string | undefined, authorization: string) => LaneCredentials | undefined;

/**
 * The rate-limit check of a lane request, when per-user limits are on (the auth plugin's): the
 * X-RateLimit-* headers for its answer and, over the limit, the refusal to answer instead;
 * DECLINE when the key must be checked afresh (Fastify's path).
 */
export type LaneAdmit = (c: LaneCredentials) => Promise<{ headers: Record<string, string>; refusal?: AppError } | typeof DECLINE>;

/** The access-log plugin's line and RED metrics for a request the lane answered. */
export type LaneObserve = (r: { method: string; route: string; status: number; ms: number; actor?: Actor; ip: string | undefined }) => void;

/** Query strings whose parsing is the same everywhere: no escapes, no '+', nothing but these. */
const PLAIN_QUERY = /^[A-Za-z0-9_.:=&-]*$/;

/**
 * The largest POST body the lane reads: a presence ping's is under 100 bytes. Longer ones
 * are not the plain form of anything the lane serves, and are Fastify's to read.
 */
export const LANE_BODY_LIMIT = 1024;

/** The body's media type as Zulip's clients send a form (python-zulip-api, and the web app with its charset). */
const FORM = /^application\/x-www-form-urlencoded\s*(;\s*charset="?utf-8"?\s*)?$/i;

type Method = 'GET' | 'POST';

interface Route {
  method: Method;
  route: string;
  names: ReadonlySet<string>;
  handler: LaneHandler;
}

export class FastLane {
  private readonly routes = new Map<string, Route>();
  /** The bodies of POSTs the lane read and then handed to Fastify, for `payload`. */
  private readonly readBodies = new WeakMap<IncomingMessage, Buffer>();
  /** Set when the gateway starts closing: Fastify then answers 503, as configured. */
  closing = false;
  authenticate?: LaneAuthenticate;
  admit?: LaneAdmit;
  observe?: LaneObserve;

  /**
   * `exactClientIp`: the socket's address is the client's (no trusted proxy), or no access
   * line needs it. Else the lane stands aside: Fastify works the address out of
   * X-Forwarded-For for the access log.
   */
  constructor(
    private readonly log: Logger,
    private readonly exactClientIp: boolean,
  ) {}

  /**
   * A lane route: `path` as Fastify would match it (a trailing slash is ignored), with its
   * parameters' names. The Fastify route of a POST must take its body through `payload`.
   */
  add(method: Method, path: string, names: readonly string[], handler: LaneHandler): void {
    this.routes.set(`${method} ${path}`, { method, route: path, names: new Set(names), handler });
  }

  /**
   * The body Fastify parses (a preParsing hook's answer): the bytes the lane read, when it
   * read them and then handed the request on; else the request's own stream.
   */
  payload(req: IncomingMessage, stream: Readable): Readable {
    const body = this.readBodies.get(req);
    if (!body) return stream;
    this.readBodies.delete(req);
    return Readable.from([body], { objectMode: false });
  }

  /** Node's request listener: the lane's requests, and Fastify's handler for the rest. */
  listener(fastify: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void {
    return (req, res) => {
      if (!this.take(req, res, fastify)) fastify(req, res);
    };
  }

  private take(req: IncomingMessage, res: ServerResponse, fastify: (req: IncomingMessage, res: ServerResponse) => void): boolean {
    if (this.closing || this.routes.size === 0 || !this.authenticate || !this.exactClientIp) return false;
    const url = req.url ?? '';
    const q = url.indexOf('?');
    let path = q < 0 ? url : url.slice(0, q);
    if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
    const route = this.routes.get(`${req.method} ${path}`);
    if (!route) return false;
    const length = req.headers['content-length'];
    if (req.headers['transfer-encoding'] !== undefined) return false;
    if (route.method === 'GET' ? length !== undefined && length !== '0' : !plainFormHeaders(req, length) || q >= 0) return false;
    const authorization = req.headers.authorization;
    if (!authorization) return false;
    const query = route.method === 'GET' && q >= 0 ? parsePlainQuery(url.slice(q + 1), route.names) : {};
    if (!query) return false;
    const auth = this.authenticate(req.headers.host, authorization);
    if (!auth) return false;
    if (telemetryStarted()) nameServerSpan(req.method as string, route.route);
    if (route.method === 'GET') {
      this.run(route, req, res, query, auth, fastify);
      return true;
    }
    readBody(req, (body) => {
      const params = parsePlainQuery(body.toString('latin1'), route.names);
      if (!params) return this.handOn(req, res, body, fastify);
      this.run(route, req, res, params, auth, (rq, rs) => this.handOn(rq, rs, body, fastify));
    });
    return true;
  }

  /** Fastify's handler for a POST whose body the lane has read (`payload` gives it back). */
  private handOn(req: IncomingMessage, res: ServerResponse, body: Buffer, fastify: (req: IncomingMessage, res: ServerResponse) => void): void {
    this.readBodies.set(req, body);
    fastify(req, res);
  }

  private run(route: Route, req: IncomingMessage, res: ServerResponse, params: Record<string, string>, auth: LaneCredentials, fastify: (req: IncomingMessage, res: ServerResponse) => void): void {
    const started = performance.now();
    // Headers every answer carries (the rate limit's), refusals included.
    let always: Record<string, string> | undefined;
    const admitted = this.admit ? this.admit(auth) : undefined;
    const answered = admitted
      ? admitted.then((a) => {
          if (a === DECLINE) return DECLINE;
          always = a.headers;
          if (a.refusal) throw a.refusal;
          return route.handler({ req, res, params, credentials: auth });
        })
      : route.handler({ req, res, params, credentials: auth });
    answered.then(
      (answer) => {
        if (answer === DECLINE) return fastify(req, res);
        this.send(res, 200, answer.body, always ? { ...always, ...answer.headers } : answer.headers);
        this.observed(req, route.route, 200, started, auth.actor);
      },
      (err: unknown) => {
        const e = this.refusal(err);
        const headers: Record<string, string> = { ...always };
        if (e.httpStatus === 401) headers['www-authenticate'] = 'Basic realm="zulip"';
        const retryAfter = e.data['retry-after'];
        if (e.httpStatus === 429 && typeof retryAfter === 'number') headers['retry-after'] = String(Math.ceil(retryAfter));
        this.send(res, e.httpStatus, JSON.stringify(errorBody(e)), headers);
        this.observed(req, route.route, e.httpStatus, started, auth.actor);
      },
    );
  }

  /** As the error-envelope plugin: an AppError as it is, an outage 503, anything else a 500 without detail. */
  private refusal(err: unknown): AppError {
    const e = isAppError(err) ? err : (asOutage(err) ?? internalError(err));
    if (e.httpStatus >= 500) this.log.error({ err, code: e.code }, 'request failed');
    else this.log.info({ code: e.code, status: e.httpStatus }, 'request rejected');
    return e;
  }

  private send(res: ServerResponse, status: number, body: string | Buffer, headers: Record<string, string> = {}): void {
    if (res.headersSent || res.destroyed) return;
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      // Authenticated answers must never be cached by anything between us and the client (as app.ts's onSend).
      'cache-control': 'private, no-store',
      ...headers,
    });
    res.end(body);
  }

  private observed(req: IncomingMessage, route: string, status: number, started: number, actor: Actor): void {
    this.observe?.({ method: req.method as string, route, status, ms: performance.now() - started, actor, ip: req.socket.remoteAddress });
  }
}

/** A POST the lane may read: a declared, short, urlencoded body (in Zulip's clients' forms). */
function plainFormHeaders(req: IncomingMessage, length: string | undefined): boolean {
  if (length === undefined || !/^\d{1,4}$/.test(length) || Number(length) > LANE_BODY_LIMIT) return false;
  const type = req.headers['content-type'];
  return type !== undefined && FORM.test(type);
}

/**
 * Calls `done` with the whole body. A client that leaves before sending it gets no answer
 * (Node destroys the request; Fastify would answer nobody either).
 */
function readBody(req: IncomingMessage, done: (body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.once('end', () => done(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
}

/** The parameters of a plain query string when each is one of `names` and given once; else undefined. */
function parsePlainQuery(qs: string, names: ReadonlySet<string>): Record<string, string> | undefined {
  if (!PLAIN_QUERY.test(qs)) return undefined;
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  if (qs === '') return out;
  for (const pair of qs.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = eq < 0 ? pair : pair.slice(0, eq);
    if (!names.has(name) || name in out) return undefined;
    out[name] = eq < 0 ? '' : pair.slice(eq + 1);
  }
  return out;
}
