/**
 * People's values of the realm's custom profile fields: set by the person
 * (PATCH/DELETE /users/me/profile_data) or by an administrator (PATCH /users/{id}).
 * Every changed value reaches everyone as realm_user update {custom_profile_field}.
 */
import { eventsInbox, type Actor } from '@zc/shared/contracts';
import { transaction, type Queryable } from '@zc/shared/db';
import { badRequest } from '@zc/shared/errors';
import { addToOutbox } from '@zc/shared/outbox';
import { render } from '@zc/markdown';
import { realmUrlOf, type UsersDeps } from '../deps.js';
import { humansOnly, noSuchUser } from '../lib/errors.js';
import { FieldType, checkFieldValue, isRenderable, userIdsOfValue } from '../lib/profile-field-rules.js';
import { profileFieldStore, profileValueStore, type ProfileFieldRow } from '../store/profile-field-store.js';
import { realmStore, type RealmRow } from '../store/realm-store.js';
import { userStore, type UserRow } from '../store/user-store.js';

export interface ProfileDataEntry {
  id: number;
  value: string | number[] | null;
}

/** A checked change of one value: the text to store, or null to remove it. */
export interface CheckedValue {
  field: ProfileFieldRow;
  stored: string | null;
}

const fieldNotFound = (id: number) => badRequest(`Field id ${id} not found.`);

/**
 * Zulip's validate_user_custom_profile_data: every id names a field of the realm and every
 * value suits its field. With `allowRemoval` (the administrators' form) a null or empty value
 * removes the user's value.
 */
export async function checkProfileData(
  q: Queryable,
  realmId: number,
  entries: readonly ProfileDataEntry[],
  o: { allowRemoval: boolean },
): Promise<CheckedValue[]> {
  const fields = new Map((await profileFieldStore.listForRealm(q, realmId)).map((f) => [f.id, f]));
  const out: CheckedValue[] = [];
  for (const e of entries) {
    const field = fields.get(e.id);
    if (!field) throw fieldNotFound(e.id);
    const empty = e.value === null || e.value === '' || (Array.isArray(e.value) && e.value.length === 0);
    if (o.allowRemoval && empty) {
      out.push({ field, stored: null });
      continue;
    }
    const stored = checkFieldValue(field, e.value);
    if (field.field_type === FieldType.USER) await checkPickedUsers(q, realmId, userIdsOfValue(stored));
    out.push({ field, stored });
  }
  return out;
}

/** Zulip's check_valid_user_ids for person pickers: active people of the realm, not bots. */
async function checkPickedUsers(q: Queryable, realmId: number, ids: readonly number[]): Promise<void> {
  const found = new Map((await userStore.listByIds(q, realmId, ids)).map((u) => [u.id, u]));
  for (const id of ids) {
    const u = found.get(id);
    if (!u || u.is_system_bot) throw badRequest(`Invalid user ID: ${id}`);
    if (!u.is_active) throw badRequest(`User with ID ${id} is deactivated`);
    if (u.is_bot) throw badRequest(`User with ID ${id} is a bot`);
  }
}

/** Writes the checked values that differ from the stored ones and announces each. */
export async function applyProfileData(deps: UsersDeps, q: Queryable, realm: RealmRow, user: UserRow, values: readonly CheckedValue[]): Promise<void> {
  for (const { field, stored } of values) {
    const current = await profileValueStore.find(q, user.id, field.id);
    if (stored === null) {
      if (!current) continue;
      await profileValueStore.delete(q, user.id, field.id);
      await announceValue(q, realm.id, user.id, { id: field.id, value: null });
      continue;
    }
    if (current?.value === stored) continue;
    const rendered = isRenderable(field.field_type) ? render(stored, { realmUrl: realmUrlOf(deps, realm) }).html : null;
    await profileValueStore.upsert(q, user.id, field.id, stored, rendered);
    await announceValue(q, realm.id, user.id, rendered === null ? { id: field.id, value: stored } : { id: field.id, value: stored, rendered_value: rendered });
  }
}

async function announceValue(q: Queryable, realmId: number, userId: number, customProfileField: Record<string, unknown>): Promise<void> {
  await addToOutbox(q, 'users', eventsInbox.notify, {
    realm_id: realmId,
    users: await userStore.listActiveIds(q, realmId),
    event: { type: 'realm_user', op: 'update', person: { user_id: userId, custom_profile_field: customProfileField } },
  });
}

async function ownAccount(q: Queryable, actor: Actor): Promise<{ realm: RealmRow; me: UserRow }> {
  // Zulip's human_users_only: bots have no profile data of their own to edit.
  if (actor.is_bot) throw humansOnly();
  const realm = await realmStore.findById(q, actor.realm_id);
  const me = await userStore.findById(q, actor.realm_id, actor.user_id);
  if (!realm || !me) throw noSuchUser();
  return { realm, me };
}

/** PATCH /users/me/profile_data: sets the caller's values. */
export async function checkUpdateOwnProfileData(deps: UsersDeps, actor: Actor, entries: readonly ProfileDataEntry[]): Promise<void> {
  await transaction(deps.pool, async (tx) => {
    const { realm, me } = await ownAccount(tx, actor);
    const values = await checkProfileData(tx, realm.id, entries, { allowRemoval: false });
    await applyProfileData(deps, tx, realm, me, values);
  });
}

/** DELETE /users/me/profile_data: removes the caller's values of the given fields (absent values are fine). */
export async function checkRemoveOwnProfileData(deps: UsersDeps, actor: Actor, fieldIds: readonly number[]): Promise<void> {
  await transaction(deps.pool, async (tx) => {
    const { realm, me } = await ownAccount(tx, actor);
    const values: CheckedValue[] = [];
    for (const id of fieldIds) {
      const field = await profileFieldStore.find(tx, realm.id, id);
      if (!field) throw fieldNotFound(id);
      values.push({ field, stored: null });
    }
    await applyProfileData(deps, tx, realm, me, values);
  });
}
