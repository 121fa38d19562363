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
export const payloadTooLarge = () => new AppError('PAYLOAD_TOO_LARGE', 'Request body too large', 413);
export const internalError = (cause?: unknown) =>
  new AppError('INTERNAL_SERVER_ERROR', 'Internal server error', 500, {}, { cause });
