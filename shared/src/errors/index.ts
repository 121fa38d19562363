/**
 * The one error type of the project. Anything thrown inside a service that is an AppError
 * reaches the client as `{result:"error", msg, code, ...data}` with `httpStatus`; anything
 * else becomes a 500 with no detail (the detail goes to the log).
 */
export type ErrorCode =
  | 'BAD_REQUEST'
  | 'REQUEST_VARIABLE_MISSING'
  | 'REQUEST_VARIABLE_INVALID'
  | 'UNAUTHORIZED'
  | 'UNAUTHORIZED_PRINCIPAL'
  | 'INVALID_API_KEY'
  | 'USER_DEACTIVATED'
  | 'REALM_DEACTIVATED'
  | 'RATE_LIMIT_HIT'
  | 'STREAM_DOES_NOT_EXIST'
  | 'BAD_EVENT_QUEUE_ID'
  | 'REQUEST_TIMEOUT'
  | 'NOT_FOUND'
  | 'SERVICE_UNAVAILABLE'
  | 'INTERNAL_SERVER_ERROR'
  | 'REACTION_ALREADY_EXISTS'
  | 'REACTION_DOES_NOT_EXIST'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNAUTHORIZED_PRINCIPAL';

export class AppError extends Error {
  constructor(
    /** Machine-readable code; `null` for the errors the spec says carry none (STYLE decision 1). */
    readonly code: ErrorCode | null,
    message: string,
    readonly httpStatus = 400,
    readonly data: Readonly<Record<string, unknown>> = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'AppError';
  }
}

/** Wire form of an AppError, as it crosses NATS. */
export interface WireError {
  code: ErrorCode | null;
  msg: string;
  status: number;
  data: Record<string, unknown>;
}

export function toWireError(e: AppError): WireError {
  return { code: e.code, msg: e.message, status: e.httpStatus, data: { ...e.data } };
}

export function fromWireError(w: WireError): AppError {
  return new AppError(w.code, w.msg, w.status, w.data);
}

export function isAppError(e: unknown): e is AppError {
  return e instanceof AppError;
}

// Factories for errors used by more than one service. Service-specific ones live with the service.
export const badRequest = (msg: string, data: Record<string, unknown> = {}) =>
  new AppError('BAD_REQUEST', msg, 400, data);
export const notFound = (msg: string) => new AppError('BAD_REQUEST', msg, 404);
export const requestVariableMissing = (name: string) =>
  new AppError('REQUEST_VARIABLE_MISSING', `Missing '${name}' argument`, 400, { var_name: name });
export const serviceUnavailable = () =>
  new AppError('SERVICE_UNAVAILABLE', 'Service temporarily unavailable, try again', 503);
/** Zulip's OrganizationAdministratorRequiredError. */
export const organizationAdministratorRequired = () => new AppError('UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator', 400);
/** Zulip's OrganizationOwnerRequiredError. */
export const organizationOwnerRequired = () => new AppError('UNAUTHORIZED_PRINCIPAL', 'Must be an organization owner', 400);
/**
 * The HTTP client went away before its answer (nginx's 499): the work done for it stops. Nobody
 * reads this answer; it keeps such requests apart from failures in logs and metrics.
 */
export const clientClosedRequest = () => new AppError('BAD_REQUEST', 'The client closed the request', 499);
export const payloadTooLarge = () => new AppError('PAYLOAD_TOO_LARGE', 'Request body too large', 413);
/** A change whose client or domain event could never be delivered (over NATS's max_payload even gzipped). */
export const changeTooLarge = () => new AppError('BAD_REQUEST', 'This request changes too much at once; split it into smaller requests', 400);
export const internalError = (cause?: unknown) =>
  new AppError('INTERNAL_SERVER_ERROR', 'Internal server error', 500, {}, { cause });

// PostgreSQL SQLSTATEs that mean "the database is not usable right now", not "this request is
// wrong": connection exceptions (08xxx), shutdown and recovery (57P01-57P03), too many
// connections, serialization failures and deadlocks (the caller may simply retry), and
// statements cancelled at the caller's deadline or after idling in a transaction.
const PG_OUTAGE_STATES = /^(08|57P0[1-3]|57014|53300|40001|40P01|25P03)/;
const OUTAGE_MESSAGES = [
  /Connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /Client has encountered a connection error/i,
  /Connection is closed/i, // ioredis
  /Reached the max retries per request/i, // ioredis
  /Stream isn't writeable/i, // ioredis with the offline queue off
];
const OUTAGE_NAMES = new Set(['MaxRetriesPerRequestError', 'ClosedConnectionError', 'DrainingConnectionError', 'ConnectionError', 'TimeoutError', 'NoRespondersError', 'RequestError']);
const OUTAGE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTCONN']);

/**
 * A dependency (PostgreSQL, Redis, NATS) outage seen as a thrown error becomes the 503 a client
 * retries, never a 500; undefined for anything else (a bug, answered as a 500).
 */
export function asOutage(e: unknown): AppError | undefined {
  if (isAppError(e)) return undefined;
  const err = e as { code?: unknown; message?: unknown; name?: unknown } | null;
  if (!err || typeof err !== 'object') return undefined;
  const code = typeof err.code === 'string' ? err.code : '';
  const message = typeof err.message === 'string' ? err.message : '';
  if (PG_OUTAGE_STATES.test(code) || OUTAGE_ERRNOS.has(code) || (typeof err.name === 'string' && OUTAGE_NAMES.has(err.name)) || OUTAGE_MESSAGES.some((re) => re.test(message))) {
    return new AppError('SERVICE_UNAVAILABLE', 'Service temporarily unavailable, try again', 503, {}, { cause: e });
  }
  return undefined;
}
