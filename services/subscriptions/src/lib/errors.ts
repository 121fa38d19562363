/** Errors of this service, with Zulip's messages (zulip-openapi.yaml, api-notes §2.5). */
import { AppError, badRequest } from '@zc/shared/errors';

export const insufficientPermission = () => badRequest('Insufficient permission');
export const invalidStreamId = () => badRequest('Invalid channel ID');
export const invalidStreamName = (name: string) => badRequest(`Invalid channel name '${name}'`);
export const streamDoesNotExist = (name: string) =>
  new AppError('STREAM_DOES_NOT_EXIST', `Channel '${name}' does not exist`, 400, { stream: name });
/**
 * A principal that names no active user of the realm: Zulip's PrincipalError, 403
 * UNAUTHORIZED_PRINCIPAL at our feature level (it became 400 BAD_REQUEST at level 208).
 */
export const principalError = (principal: number | string) =>
  new AppError('UNAUTHORIZED_PRINCIPAL', `User not authorized to execute queries on behalf of '${principal}'`, 403, { principal });
/** Spec §7: the private-stream authorization error carries no code. */
export const unableToAccessStream = (name: string) => new AppError(null, `Unable to access channel (${name}).`, 400);
export const ownerRequired = () => badRequest('Must be an organization owner');
export const webPublicNotEnabled = () => badRequest('Web-public channels are not enabled.');
/** Spec §3 and §7: the muted-topic transition errors carry no code. */
export const topicAlreadyMuted = () => new AppError(null, 'Topic already muted', 400);
export const topicNotMuted = () => new AppError(null, 'Topic is not muted', 400);
