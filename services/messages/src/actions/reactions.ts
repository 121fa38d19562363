/**
 * POST and DELETE /messages/{id}/reactions, as Zulip's check_add_reaction and
 * remove_reaction: the message must be readable by the caller; a bare name is looked up as
 * the realm's emoji would be now; a reaction with an emoji someone already used on the
 * message takes that reaction's name (a vote for it); the `reaction` event goes to
 * everyone who may read the message (queries/message-audience.ts).
 */
import { eventsInbox, type Actor } from '@zc/shared/contracts';
import { transaction, type Queryable } from '@zc/shared/db';
import { AppError, badRequest, requestVariableMissing } from '@zc/shared/errors';
import { addToOutbox } from '@zc/shared/outbox';
import type { MessagesDeps } from '../deps.js';
import { checkEmojiRequest, emojiByName, parseReactionType, type EmojiRef, type RealmEmojiRef } from '@zc/shared/emoji';
import { FLAG_BITS } from '../lib/flags.js';
import { accessMessage, viewerOf } from '../queries/get-messages.js';
import { realmEmojiNamed } from './realm-emoji.js';
import { messageAudience, type MessageAudience } from '../queries/message-audience.js';
import { messageStore, type MessageRow } from '../store/message-store.js';
import { reactionStore, type ReactionRow } from '../store/reaction-store.js';

export interface ReactionRequest {
  actor: Actor;
  message_id: number;
  emoji_name?: string;
  emoji_code?: string;
  reaction_type?: string;
}

export const reactionAlreadyExists = () => new AppError('REACTION_ALREADY_EXISTS', 'Reaction already exists.');
export const reactionDoesNotExist = () => new AppError('REACTION_DOES_NOT_EXIST', "Reaction doesn't exist.");

/**
 * The realm's custom emoji a reaction may name: by its name, and by its code when the type
 * is realm_emoji (confirmed with the uploads service where the read model could lag,
 * actions/realm-emoji.ts).
 */
async function realmEmojiOf(deps: MessagesDeps, realmId: number, name: string | undefined, r: { emoji_code?: string; reaction_type?: string }): Promise<RealmEmojiRef[]> {
  const ids = r.reaction_type === 'realm_emoji' && r.emoji_code !== undefined ? [r.emoji_code] : [];
  return realmEmojiNamed(deps, realmId, name === undefined ? [] : [name], ids);
}

/** The emoji a request names: code and type as given, or looked up from the name. */
function requestedEmoji(r: ReactionRequest, name: string, realmEmoji: readonly RealmEmojiRef[]): EmojiRef & { typeGiven: boolean } {
  if (r.emoji_code !== undefined && r.reaction_type !== undefined) {
    const type = parseReactionType(r.reaction_type);
    // An unknown type can match no stored reaction; check_emoji_request names the error.
    return { emoji_code: r.emoji_code, reaction_type: type ?? (r.reaction_type as EmojiRef['reaction_type']), typeGiven: true };
  }
  return { ...emojiByName(name, realmEmoji), typeGiven: false };
}

/** The reacting user as the deprecated `user` object shows them (the read model's display email and name). */
async function reactorOf(deps: MessagesDeps, actor: Actor): Promise<{ user_id: number; email: string; full_name: string }> {
  const me = (await deps.directory.resolveUsers(deps.pool, actor.realm_id, [actor.user_id])).found[0];
  return { user_id: actor.user_id, email: me?.email ?? actor.email, full_name: me?.full_name ?? actor.full_name };
}

async function notifyReaction(
  tx: Queryable,
  op: 'add' | 'remove',
  actor: Actor,
  reactor: { user_id: number; email: string; full_name: string },
  reaction: ReactionRow,
  audience: MessageAudience,
): Promise<void> {
  await addToOutbox(tx, 'messages', eventsInbox.notify, {
    realm_id: actor.realm_id,
    users: audience.userIds,
    event: {
      type: 'reaction',
      op,
      message_id: reaction.message_id,
      user_id: actor.user_id,
      // Deprecated, but still sent at our feature level (Zulip dropped it at 328).
      user: reactor,
      emoji_name: reaction.emoji_name,
      emoji_code: reaction.emoji_code,
      reaction_type: reaction.reaction_type,
    },
    ...(audience.publicStream ? { public_stream: true } : {}),
  });
}

/**
 * The audience and the reactor, read before the transaction (they do not depend on the
 * reaction). The reactor is always in the audience: they can read the message, and reacting
 * gives them a row if they had none.
 */
async function audienceAndReactor(deps: MessagesDeps, actor: Actor, row: MessageRow) {
  const [audience, reactor] = await Promise.all([messageAudience(deps.pool, actor.realm_id, row), reactorOf(deps, actor)]);
  if (!audience.userIds.includes(actor.user_id)) audience.userIds = [...audience.userIds, actor.user_id].sort((a, b) => a - b);
  return { audience, reactor };
}

export async function checkAddReaction(deps: MessagesDeps, r: ReactionRequest): Promise<void> {
  const { actor } = r;
  if (r.emoji_name === undefined) throw requestVariableMissing('emoji_name');
  const name = r.emoji_name;
  await deps.directory.realmFor(actor);
  const { row, flags } = await accessMessage(deps.pool, viewerOf(actor), r.message_id);
  const [realmEmoji, { audience, reactor }] = await Promise.all([realmEmojiOf(deps, actor.realm_id, name, r), audienceAndReactor(deps, actor, row)]);
  const emoji = requestedEmoji(r, name, realmEmoji);

  await transaction(deps.pool, async (tx) => {
    const state = await reactionStore.lockAndInspect(tx, row.id, actor.user_id, emoji.reaction_type, emoji.emoji_code);
    if (state.mine) throw reactionAlreadyExists();
    if (state.nameInUse === undefined) checkEmojiRequest(name, emoji.emoji_code, emoji.reaction_type, realmEmoji);
    const reaction: ReactionRow = { message_id: row.id, user_id: actor.user_id, reaction_type: emoji.reaction_type, emoji_code: emoji.emoji_code, emoji_name: state.nameInUse ?? name };
    if (!(await reactionStore.insert(tx, reaction))) throw reactionAlreadyExists();
    // As Zulip: a reaction to a message one never received gives a historical row, so later
    // events about the message (edits, reactions) reach the reacting user.
    if (flags === undefined) await messageStore.insertUserMessages(tx, [actor.user_id], [row.id], [FLAG_BITS.read | FLAG_BITS.historical]);
    await notifyReaction(tx, 'add', actor, reactor, reaction, audience);
  });
}

export async function checkRemoveReaction(deps: MessagesDeps, r: ReactionRequest): Promise<void> {
  const { actor } = r;
  await deps.directory.realmFor(actor);
  const { row } = await accessMessage(deps.pool, viewerOf(actor), r.message_id);
  let code = r.emoji_code;
  let type = r.reaction_type === undefined ? undefined : (parseReactionType(r.reaction_type) ?? r.reaction_type);
  if (code === undefined) {
    if (r.emoji_name === undefined) throw badRequest('At least one of the following arguments must be present: emoji_name, emoji_code');
    const found = emojiByName(r.emoji_name, await realmEmojiOf(deps, actor.realm_id, r.emoji_name, {}));
    code = found.emoji_code;
    // Zulip defaults the type to unicode_emoji; the name's own type is what a caller who gave none means.
    type ??= found.reaction_type;
  }
  const emojiCode = code;
  const reactionType = type ?? 'unicode_emoji';
  const { audience, reactor } = await audienceAndReactor(deps, actor, row);
  await transaction(deps.pool, async (tx) => {
    const removed = await reactionStore.remove(tx, row.id, actor.user_id, reactionType, emojiCode);
    if (!removed) throw reactionDoesNotExist();
    await notifyReaction(tx, 'remove', actor, reactor, removed, audience);
  });
}
