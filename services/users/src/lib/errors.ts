/** Errors of the users service that several actions share, with Zulip's messages and codes. */
import { AppError, badRequest } from '@zc/shared/errors';

/** Zulip's OrganizationAdministratorRequiredError / OrganizationOwnerRequiredError: 400, UNAUTHORIZED_PRINCIPAL. */
export const mustBeAdmin = () => new AppError('UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator', 400);
export const mustBeOwner = () => new AppError('UNAUTHORIZED_PRINCIPAL', 'Must be an organization owner', 400);
export const noSuchUser = () => badRequest('No such user');
export const insufficientPermission = () => badRequest('Insufficient permission');
export const humansOnly = () => badRequest('This endpoint does not accept bot requests.');
