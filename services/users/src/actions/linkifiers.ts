/** Linkifiers (administrators only) and alert words; each change is announced through the outbox. */
import { eventsInbox, isAdmin, usersEvents, type Actor, type Linkifier } from '@zc/shared/contracts';
import { isUniqueViolation, transaction, type Queryable } from '@zc/shared/db';
import { AppError, badRequest, requestVariableMissing } from '@zc/shared/errors';
import { addToOutbox } from '@zc/shared/outbox';
import type { UsersDeps } from '../deps.js';
import { checkLinkifier, legacyFormatToTemplate } from '../lib/linkifier-rules.js';
import { alertWordStore, linkifierStore } from '../store/linkifier-store.js';
import { userStore } from '../store/user-store.js';
import { mustBeAdmin } from '../lib/errors.js';

const linkifierNotFound = () => badRequest('Linkifier not found.');

function requireAdmin(actor: Actor): void {
  if (!isAdmin(actor)) throw mustBeAdmin();
}

export function toLinkifier(r: { id: number; pattern: string; url_template: string }): Linkifier {
  return { id: r.id, pattern: r.pattern, url_template: r.url_template };
}

/**
 * After any change, the realm's whole ordered list goes to the renderers' read models and,
 * as `realm_linkifiers`, to every user's queues.
 */
async function announceLinkifiers(q: Queryable, realmId: number): Promise<void> {
  const linkifiers = (await linkifierStore.listForRealm(q, realmId)).map(toLinkifier);
  await addToOutbox(q, 'users', usersEvents.linkifiersChanged, { realm_id: realmId, linkifiers });
  const everyone = (await userStore.listByRealm(q, realmId)).filter((u) => u.is_active).map((u) => u.id);
  await addToOutbox(q, 'users', eventsInbox.notify, {
    realm_id: realmId,
    users: everyone,
    event: { type: 'realm_linkifiers', realm_linkifiers: linkifiers },
  });
}

function duplicatePattern(e: unknown): never {
  if (isUniqueViolation(e)) {
    throw new AppError('BAD_REQUEST', 'Linkifier with this Realm and Pattern already exists.', 400, {
      errors: { __all__: ['Linkifier with this Realm and Pattern already exists.'] },
    });
  }
  throw e;
}

export interface LinkifierInput {
  pattern: string;
  url_template?: string;
  url_format_string?: string;
}

/** The template a request names, from `url_template` or the legacy `url_format_string`. */
function templateOf(input: LinkifierInput): string {
  if (input.url_template !== undefined) return input.url_template;
  if (input.url_format_string !== undefined) return legacyFormatToTemplate(input.url_format_string);
  throw requestVariableMissing('url_template');
}

export async function checkAddLinkifier(deps: UsersDeps, actor: Actor, input: LinkifierInput): Promise<number> {
  requireAdmin(actor);
  const { pattern } = input;
  const urlTemplate = templateOf(input);
  checkLinkifier(pattern, urlTemplate);
  return transaction(deps.pool, async (tx) => {
    const row = await linkifierStore.insert(tx, actor.realm_id, pattern, urlTemplate).catch(duplicatePattern);
    await announceLinkifiers(tx, actor.realm_id);
    return row.id;
  });
}

export async function checkUpdateLinkifier(deps: UsersDeps, actor: Actor, id: number, input: LinkifierInput): Promise<void> {
  requireAdmin(actor);
  const { pattern } = input;
  const urlTemplate = templateOf(input);
  checkLinkifier(pattern, urlTemplate);
  await transaction(deps.pool, async (tx) => {
    const found = await linkifierStore.update(tx, actor.realm_id, id, pattern, urlTemplate).catch(duplicatePattern);
    if (!found) throw linkifierNotFound();
    await announceLinkifiers(tx, actor.realm_id);
  });
}

export async function checkRemoveLinkifier(deps: UsersDeps, actor: Actor, id: number): Promise<void> {
  requireAdmin(actor);
  await transaction(deps.pool, async (tx) => {
    if (!(await linkifierStore.delete(tx, actor.realm_id, id))) throw linkifierNotFound();
    await announceLinkifiers(tx, actor.realm_id);
  });
}

/** PATCH /realm/linkifiers: the list must name every linkifier of the realm exactly once. */
export async function checkReorderLinkifiers(deps: UsersDeps, actor: Actor, orderedIds: readonly number[]): Promise<void> {
  requireAdmin(actor);
  await transaction(deps.pool, async (tx) => {
    const current = (await linkifierStore.listForRealm(tx, actor.realm_id)).map((l) => l.id);
    const given = new Set(orderedIds);
    if (given.size !== orderedIds.length) throw badRequest('The ordered list must not contain duplicated linkifiers');
    if (given.size !== current.length || current.some((id) => !given.has(id))) {
      throw badRequest('The ordered list must enumerate all existing linkifiers exactly once');
    }
    await linkifierStore.setOrder(tx, actor.realm_id, orderedIds);
    await announceLinkifiers(tx, actor.realm_id);
  });
}

export const ALERT_WORD_MAX_LENGTH = 100;

/**
 * Alert words are matched against every message a user receives, so their number is bounded:
 * per call (the request's own work) and per user (every later message's).
 */
export const ALERT_WORD_LIMITS = { perCall: 100, perUser: 1000 } as const;

const tooManyAlertWords = () => badRequest(`Too many alert words: at most ${ALERT_WORD_LIMITS.perUser} per user.`);

function checkAlertWords(words: readonly string[]): string[] {
  if (words.length > ALERT_WORD_LIMITS.perCall) throw badRequest(`Too many alert words in one request: at most ${ALERT_WORD_LIMITS.perCall}.`);
  return words.map((w, i) => {
    const word = w.trim();
    if (word.length > ALERT_WORD_MAX_LENGTH) throw badRequest(`alert_words[${i}] is too long (limit: ${ALERT_WORD_MAX_LENGTH} characters)`);
    return word;
  }).filter((w) => w !== '');
}

async function changeAlertWords(deps: UsersDeps, actor: Actor, change: (tx: Queryable) => Promise<void>, checkAfter?: (words: string[]) => void): Promise<string[]> {
  return transaction(deps.pool, async (tx) => {
    // One change of a user's words at a time: two parallel adds would each count only their
    // own rows (READ COMMITTED) and together pass the per-user cap.
    await alertWordStore.lockUser(tx, actor.user_id);
    await change(tx);
    const words = await alertWordStore.listForUser(tx, actor.user_id);
    // Checked on the result, in the transaction: refused, nothing is written.
    checkAfter?.(words);
    await addToOutbox(tx, 'users', usersEvents.alertWordsChanged, { realm_id: actor.realm_id, user_id: actor.user_id, alert_words: words });
    await addToOutbox(tx, 'users', eventsInbox.notify, { realm_id: actor.realm_id, users: [actor.user_id], event: { type: 'alert_words', alert_words: words } });
    return words;
  });
}

export function doAddAlertWords(deps: UsersDeps, actor: Actor, words: readonly string[]): Promise<string[]> {
  const clean = checkAlertWords(words);
  return changeAlertWords(
    deps,
    actor,
    (tx) => alertWordStore.add(tx, actor.realm_id, actor.user_id, clean),
    (all) => {
      if (all.length > ALERT_WORD_LIMITS.perUser) throw tooManyAlertWords();
    },
  );
}

export function doRemoveAlertWords(deps: UsersDeps, actor: Actor, words: readonly string[]): Promise<string[]> {
  if (words.length > ALERT_WORD_LIMITS.perCall) throw badRequest(`Too many alert words in one request: at most ${ALERT_WORD_LIMITS.perCall}.`);
  return changeAlertWords(deps, actor, (tx) => alertWordStore.remove(tx, actor.user_id, words.map((w) => w.trim())));
}
