/**
 * Custom profile fields as Zulip defines them (zerver/models CustomProfileField and
 * views/custom_profile_fields): the field types, what a definition may hold, and what a
 * user's value of each type may be. Pure: checks needing the database (user ids of a
 * person-picker value) are the caller's.
 */
import { badRequest } from '@zc/shared/errors';

export const FieldType = {
  SHORT_TEXT: 1,
  LONG_TEXT: 2,
  SELECT: 3,
  DATE: 4,
  URL: 5,
  USER: 6,
  EXTERNAL_ACCOUNT: 7,
  PRONOUNS: 8,
} as const;

/** `custom_profile_field_types` of /register. */
export const CUSTOM_PROFILE_FIELD_TYPES = {
  SHORT_TEXT: { id: 1, name: 'Short text' },
  LONG_TEXT: { id: 2, name: 'Long text' },
  SELECT: { id: 3, name: 'List of options' },
  DATE: { id: 4, name: 'Date picker' },
  URL: { id: 5, name: 'Link' },
  USER: { id: 6, name: 'Person picker' },
  EXTERNAL_ACCOUNT: { id: 7, name: 'External account' },
  PRONOUNS: { id: 8, name: 'Pronouns' },
} as const;

export const NAME_MAX_LENGTH = 40;
export const HINT_MAX_LENGTH = 80;
export const MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS = 2;
const SHORT_VALUE_MAX_LENGTH = 50;
const LONG_VALUE_MAX_LENGTH = 500;

/** The external accounts Zulip knows by name; a `custom` one brings its own URL pattern. */
export const DEFAULT_EXTERNAL_ACCOUNTS: Readonly<Record<string, { name: string; hint: string }>> = {
  twitter: { name: 'Twitter', hint: 'Enter your Twitter username' },
  github: { name: 'GitHub', hint: 'Enter your GitHub username' },
};

export type FieldData = Record<string, unknown>;

const isFieldType = (t: number) => Object.values(FieldType).includes(t as (typeof FieldType)[keyof typeof FieldType]);

/** Values of short and long text fields are Markdown; clients show `rendered_value`. */
export const isRenderable = (fieldType: number) => fieldType === FieldType.SHORT_TEXT || fieldType === FieldType.LONG_TEXT;

/** An external-account field of a known subtype: Zulip names and describes it itself. */
export function isDefaultExternalField(fieldType: number, data: FieldData): boolean {
  return fieldType === FieldType.EXTERNAL_ACCOUNT && typeof data.subtype === 'string' && data.subtype !== 'custom';
}

export function checkNameAndHint(name: string, hint: string): void {
  if (name.trim() === '') throw badRequest('Label cannot be blank.');
  if (hint.length > HINT_MAX_LENGTH) throw badRequest(`hint is too long (limit: ${HINT_MAX_LENGTH} characters)`);
  if (name.length > NAME_MAX_LENGTH) throw badRequest(`name is too long (limit: ${NAME_MAX_LENGTH} characters)`);
}

function requiredString(where: string, v: unknown): string {
  if (typeof v !== 'string') throw badRequest(`${where} is not a string`);
  if (v.trim() === '') throw badRequest(`${where} cannot be blank.`);
  return v;
}

function onlyKeys(where: string, o: Record<string, unknown>, required: readonly string[], optional: readonly string[] = []): void {
  for (const k of required) if (!(k in o)) throw badRequest(`${where} key is missing: ${k}`);
  const extra = Object.keys(o).filter((k) => !required.includes(k) && !optional.includes(k));
  if (extra.length) throw badRequest(`Unexpected arguments: ${extra.join(', ')}`);
}

function checkSelectData(data: FieldData): void {
  if (Object.keys(data).length < 1) throw badRequest('Field must have at least one choice.');
  const texts = new Set<string>();
  for (const [key, choice] of Object.entries(data)) {
    if (key.trim() === '') throw badRequest("'value' cannot be blank.");
    if (!choice || typeof choice !== 'object' || Array.isArray(choice)) throw badRequest(`field_data["${key}"] is not a dict`);
    const c = choice as Record<string, unknown>;
    onlyKeys(`field_data["${key}"]`, c, ['text', 'order']);
    texts.add(requiredString(`field_data["${key}"]["text"]`, c.text));
    requiredString(`field_data["${key}"]["order"]`, c.order);
  }
  if (texts.size !== Object.keys(data).length) throw badRequest('Field must not have duplicate choices.');
}

function checkExternalAccountData(data: FieldData): void {
  onlyKeys('field_data', data, ['subtype'], ['url_pattern']);
  const subtype = requiredString('field_data["subtype"]', data.subtype);
  if ('url_pattern' in data) {
    const pattern = data.url_pattern;
    if (typeof pattern !== 'string') throw badRequest('field_data["url_pattern"] is not a string');
    if (pattern.split('%(username)s').length !== 2) throw badRequest('username should appear exactly once in pattern.');
    if (!isUrl(pattern.replace('%(username)s', 'username'))) throw badRequest('field_data["url_pattern"] is not a URL');
  }
  if (subtype in DEFAULT_EXTERNAL_ACCOUNTS) return;
  if (subtype !== 'custom') throw badRequest('Invalid external account type');
  if (!('url_pattern' in data)) throw badRequest('Custom external account must define URL pattern');
}

export interface FieldDefinition {
  name: string;
  hint: string;
  field_type: number;
  field_data: FieldData;
  display_in_profile_summary: boolean;
}

/** Zulip's validate_custom_profile_field, for a new field or a changed one. */
export function checkFieldDefinition(f: FieldDefinition): void {
  if (!isDefaultExternalField(f.field_type, f.field_data)) checkNameAndHint(f.name, f.hint);
  if (!isFieldType(f.field_type)) throw badRequest('Invalid field type.');
  if (f.field_type === FieldType.SELECT) checkSelectData(f.field_data);
  else if (f.field_type === FieldType.EXTERNAL_ACCOUNT) checkExternalAccountData(f.field_data);
  // Long text does not fit a profile summary; person pickers are not supported there (yet, says Zulip).
  if (f.display_in_profile_summary && (f.field_type === FieldType.LONG_TEXT || f.field_type === FieldType.USER)) {
    throw badRequest('Field type not supported for display in profile summary.');
  }
}

/** How a definition's `field_data` is stored and shown: JSON for the types that have data, '' otherwise. */
export function storedFieldData(fieldType: number, data: FieldData): string {
  return fieldType === FieldType.SELECT || fieldType === FieldType.EXTERNAL_ACCOUNT ? JSON.stringify(data) : '';
}

function isUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return ['http:', 'https:', 'ftp:', 'ftps:'].includes(u.protocol) && u.hostname !== '';
  } catch {
    return false;
  }
}

function isDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.toISOString().slice(0, 10) === s;
}

function cappedString(name: string, v: unknown, max: number): string {
  if (typeof v !== 'string') throw badRequest(`${name} is not a string`);
  if (v.includes('\u0000')) throw badRequest('Null characters are not allowed.');
  if (v.length > max) throw badRequest(`${name} is too long (limit: ${max} characters)`);
  return v;
}

export type ProfileValue = string | number[];

/**
 * Checks a user's value for a field (Zulip's FIELD_VALIDATORS, named after the field) and
 * returns the text stored for it. Person-picker values come back as their JSON list; that
 * the ids name active people of the realm is the caller's to check.
 */
export function checkFieldValue(field: { name: string; field_type: number; field_data: string }, value: unknown): string {
  const name = field.name;
  switch (field.field_type) {
    case FieldType.LONG_TEXT:
      return cappedString(name, value, LONG_VALUE_MAX_LENGTH);
    case FieldType.DATE: {
      const s = cappedString(name, value, Number.MAX_SAFE_INTEGER);
      if (!isDate(s)) throw badRequest(`${name} is not a date`);
      return s;
    }
    case FieldType.URL: {
      const s = cappedString(name, value, Number.MAX_SAFE_INTEGER);
      if (!isUrl(s)) throw badRequest(`${name} is not a URL`);
      return s;
    }
    case FieldType.SELECT: {
      const s = cappedString(name, value, Number.MAX_SAFE_INTEGER);
      const choices = field.field_data === '' ? {} : (JSON.parse(field.field_data) as FieldData);
      if (!Object.hasOwn(choices, s)) throw badRequest(`'${s}' is not a valid choice for '${name}'.`);
      return s;
    }
    case FieldType.USER: {
      if (!Array.isArray(value)) throw badRequest(`${name} is not a list`);
      value.forEach((id, i) => {
        if (typeof id !== 'number' || !Number.isSafeInteger(id)) throw badRequest(`${name}[${i}] is not an integer`);
      });
      return JSON.stringify(value);
    }
    default:
      // Short text, external account and pronouns.
      return cappedString(name, value, SHORT_VALUE_MAX_LENGTH);
  }
}

/** The user ids a stored person-picker value names. */
export function userIdsOfValue(stored: string): number[] {
  return JSON.parse(stored) as number[];
}

/** A field as clients see it (Zulip's CustomProfileField.as_dict, plus the later `required`/`editable_by_user`). */
export function toApiField(f: {
  id: number;
  name: string;
  hint: string;
  field_type: number;
  field_data: string;
  order: number;
  display_in_profile_summary: boolean;
  required: boolean;
  editable_by_user: boolean;
}): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: f.id,
    name: f.name,
    type: f.field_type,
    hint: f.hint,
    field_data: f.field_data,
    order: f.order,
    required: f.required,
    editable_by_user: f.editable_by_user,
  };
  // Zulip includes the key only when it is true.
  if (f.display_in_profile_summary) out.display_in_profile_summary = true;
  return out;
}
