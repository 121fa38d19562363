/** The uploads service's client-visible errors, worded as Zulip words them. */
import { AppError, badRequest } from '@zc/shared/errors';

export const fileTooLarge = (maxMib: number) => badRequest(`Uploaded file is larger than the allowed limit of ${maxMib} MiB`);
export const quotaExceeded = () => badRequest("Upload would exceed your organization's upload quota.");
export const noFileGiven = () => badRequest('You must specify a file to upload');
export const tooManyFiles = () => badRequest('You may only upload one file at a time');
export const uploadIncomplete = () => badRequest('The upload ended before the file was complete');
/** Spec 4.20: an unknown id, or one the caller does not own. */
export const invalidAttachment = () => badRequest('Invalid attachment');
/** Missing, deleted, or in another realm: the same answer, so nothing leaks across realms. */
export const fileNotFound = () => new AppError('BAD_REQUEST', 'File not found', 404);
export const notAuthorizedForFile = () => new AppError('BAD_REQUEST', 'You are not authorized to view this file.', 403);
export const invalidToken = () => new AppError('BAD_REQUEST', 'Invalid or expired link', 403);

// Custom emoji (Zulip's upload_emoji, check_valid_emoji_name, resize_emoji, check_remove_custom_emoji).
export const emojiNameMissing = () => badRequest('Emoji name is missing');
export const invalidEmojiName = () =>
  badRequest('Emoji names must contain only numbers, lowercase English letters, spaces, dashes, underscores, and periods.');
export const emojiNameTaken = () => badRequest('A custom emoji with this name already exists.');
export const onlyAdminsOverrideBuiltIn = () => badRequest('Only administrators can override default emoji.');
export const insufficientPermission = () => badRequest('Insufficient permission');
export const exactlyOneFile = () => badRequest('You must upload exactly one file.');
export const notAnImage = () => badRequest('Could not decode image; did you upload an image file?');
export const imageTooLarge = () => badRequest('Image size exceeds limit.');
/** Unknown, or already deactivated: Zulip says the same. 400 at our feature level (404 from FL 190). */
export const emojiDoesNotExist = (name: string) => badRequest(`Emoji '${name}' does not exist`);
export const notEmojiAuthor = () => badRequest('Must be an organization administrator or emoji author');
