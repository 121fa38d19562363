/**
 * The realm's custom profile field definitions (administrators only; Zulip's
 * views/custom_profile_fields). After any change the whole list goes to every active member
 * as a `custom_profile_fields` event.
 */
import { eventsInbox, isAdmin, type Actor } from '@zc/shared/contracts';
import { isUniqueViolation, transaction, type Queryable } from '@zc/shared/db';
import { badRequest } from '@zc/shared/errors';
import { addToOutbox } from '@zc/shared/outbox';
import type { UsersDeps } from '../deps.js';
import { mustBeAdmin } from '../lib/errors.js';
import {
  DEFAULT_EXTERNAL_ACCOUNTS,
  MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS,
  checkFieldDefinition,
  isDefaultExternalField,
  storedFieldData,
  toApiField,
  type FieldData,
} from '../lib/profile-field-rules.js';
import { profileFieldStore, type ProfileFieldInput } from '../store/profile-field-store.js';
import { userStore } from '../store/user-store.js';

const fieldNotFound = (id: number) => badRequest(`Field id ${id} not found.`);
const summaryFull = () => badRequest(`Only ${MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS} custom profile fields can be displayed in the profile summary.`);

function duplicateLabel(e: unknown): never {
  if (isUniqueViolation(e)) throw badRequest('A field with that label already exists.');
  throw e;
}

/** The realm's fields as clients see them, in display order. */
export async function listProfileFields(q: Queryable, realmId: number): Promise<Record<string, unknown>[]> {
  return (await profileFieldStore.listForRealm(q, realmId)).map(toApiField);
}

async function announceFields(q: Queryable, realmId: number): Promise<void> {
  await addToOutbox(q, 'users', eventsInbox.notify, {
    realm_id: realmId,
    users: await userStore.listActiveIds(q, realmId),
    event: { type: 'custom_profile_fields', fields: await listProfileFields(q, realmId) },
  });
}

async function checkSummaryRoom(q: Queryable, realmId: number, wanted: boolean, exceptId: number | null): Promise<void> {
  if (wanted && (await profileFieldStore.countInSummary(q, realmId, exceptId)) >= MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS) throw summaryFull();
}

export interface NewProfileField {
  name: string;
  hint: string;
  field_type: number;
  field_data: FieldData;
  display_in_profile_summary: boolean;
  required: boolean;
  editable_by_user: boolean;
}

/** POST /realm/profile_fields; returns the new field's id. Known external accounts name themselves. */
export async function checkCreateProfileField(deps: UsersDeps, actor: Actor, f: NewProfileField): Promise<number> {
  if (!isAdmin(actor)) throw mustBeAdmin();
  const def = { ...f, name: f.name.trim() };
  return transaction(deps.pool, async (tx) => {
    await checkSummaryRoom(tx, actor.realm_id, def.display_in_profile_summary, null);
    checkFieldDefinition(def);
    const row: ProfileFieldInput = {
      ...def,
      field_data: storedFieldData(def.field_type, def.field_data),
    };
    if (isDefaultExternalField(def.field_type, def.field_data)) {
      const known = DEFAULT_EXTERNAL_ACCOUNTS[def.field_data.subtype as string] as { name: string; hint: string };
      Object.assign(row, { name: known.name, hint: known.hint, field_data: JSON.stringify({ subtype: def.field_data.subtype }) });
    }
    const created = await profileFieldStore.insert(tx, actor.realm_id, row).catch(duplicateLabel);
    await announceFields(tx, actor.realm_id);
    return created.id;
  });
}

export interface ProfileFieldChanges {
  name?: string;
  hint?: string;
  field_data?: FieldData;
  display_in_profile_summary?: boolean;
  required?: boolean;
  editable_by_user?: boolean;
}

/**
 * PATCH /realm/profile_fields/{id}. What is not given keeps its value (Zulip before 8.0
 * required the name on every update; accepting less breaks no client). The type never changes.
 */
export async function checkUpdateProfileField(deps: UsersDeps, actor: Actor, id: number, c: ProfileFieldChanges): Promise<void> {
  if (!isAdmin(actor)) throw mustBeAdmin();
  await transaction(deps.pool, async (tx) => {
    const field = await profileFieldStore.find(tx, actor.realm_id, id);
    if (!field) throw fieldNotFound(id);
    const currentData = field.field_data === '' ? {} : (JSON.parse(field.field_data) as FieldData);
    if (isDefaultExternalField(field.field_type, currentData)) throw badRequest('Default custom field cannot be updated.');
    const next = {
      name: c.name !== undefined ? c.name.trim() : field.name,
      hint: c.hint ?? field.hint,
      field_type: field.field_type,
      field_data: c.field_data ?? currentData,
      display_in_profile_summary: c.display_in_profile_summary ?? field.display_in_profile_summary,
      required: c.required ?? field.required,
      editable_by_user: c.editable_by_user ?? field.editable_by_user,
    };
    await checkSummaryRoom(tx, actor.realm_id, next.display_in_profile_summary, field.id);
    checkFieldDefinition(next);
    await profileFieldStore.update(tx, actor.realm_id, id, { ...next, field_data: storedFieldData(next.field_type, next.field_data) }).catch(duplicateLabel);
    await announceFields(tx, actor.realm_id);
  });
}

/** DELETE /realm/profile_fields/{id}: the field and every user's value of it. */
export async function checkRemoveProfileField(deps: UsersDeps, actor: Actor, id: number): Promise<void> {
  if (!isAdmin(actor)) throw mustBeAdmin();
  await transaction(deps.pool, async (tx) => {
    if (!(await profileFieldStore.delete(tx, actor.realm_id, id))) throw fieldNotFound(id);
    await announceFields(tx, actor.realm_id);
  });
}

/** PATCH /realm/profile_fields: `order` must name every field of the realm. */
export async function checkReorderProfileFields(deps: UsersDeps, actor: Actor, order: readonly number[]): Promise<void> {
  if (!isAdmin(actor)) throw mustBeAdmin();
  await transaction(deps.pool, async (tx) => {
    const given = new Set(order);
    const current = await profileFieldStore.listForRealm(tx, actor.realm_id);
    if (current.some((f) => !given.has(f.id))) throw badRequest('Invalid order mapping.');
    await profileFieldStore.setOrder(tx, actor.realm_id, order);
    await announceFields(tx, actor.realm_id);
  });
}
