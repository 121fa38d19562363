/**
 * /register against Zulip's own description of it (zulip-openapi.yaml, Zulip 10.2, read as an
 * oracle; STYLE decision 6): every key we send has the type Zulip documents, and every key
 * Zulip documents for a fetched type at our feature level (155) is present. Keys Zulip had at
 * our level and removed or renamed later are named below, with what replaced them; those are
 * the only keys allowed beyond the description.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { Ajv } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { FEATURE_LEVEL } from '@zc/shared/contracts';
import { startSystem } from '../harness.js';
import { register, type Json } from './events-support.js';

const OPENAPI = process.env.ZC_ZULIP_OPENAPI ?? fileURLToPath(new URL('../../../../shared/reference/zulip-openapi.yaml', import.meta.url));

/** Top-level keys of our level that Zulip later removed or renamed (and the FL that did it). */
const LEGACY_TOP_LEVEL = new Set([
  'realm_edit_topic_policy', // 316: can_move_messages_between_topics_group
  'realm_notifications_stream_id', // 241: realm_new_stream_announcements_stream_id
  'realm_signup_notifications_stream_id', // 241: realm_signup_announcements_stream_id
  'realm_user_group_edit_policy', // 299: can_manage_all_groups
  'realm_private_message_policy', // 270: direct_message_permission_group
  'realm_invite_to_stream_policy', // 341: can_add_subscribers_group
  'realm_invite_to_realm_policy', // 298: can_invite_users_group
  'realm_move_messages_between_streams_policy', // 310: can_move_messages_between_channels_group
  'realm_add_custom_emoji_policy', // 307: can_add_custom_emoji_group
  'realm_delete_own_message_policy', // 291: can_delete_own_message_group
  'realm_bot_creation_policy', // 344: can_create_bots_group
  'realm_email_address_visibility', // 163: a user setting
  'realm_community_topic_editing_limit_seconds', // 162: move_messages_within_stream_limit_seconds
  'is_billing_admin', // 363: can_manage_billing_group
  'hotspots', // 233: onboarding_steps
  'default_view', // 219: web_home_view
  'dense_mode', // 364: web_font_size_px
  'realm_name_in_notifications', // 168: realm_name_in_email_notifications_policy
]);
/** The same inside user_settings and realm_user_settings_defaults. */
const LEGACY_SETTINGS = ['default_view', 'escape_navigates_to_default_view', 'dense_mode', 'realm_name_in_notifications'];
/** Our spec's names for the version (DESIGN.md), beside Zulip's zulip_* ones. */
const OUR_NAMES = ['service_feature_level', 'service_version', 'service_merge_base'];
/** Values whose shape changed after our level: at FL 155 authentication methods map to booleans (FL 243 made them objects). */
const SHAPE_CHANGED_AFTER_OUR_LEVEL = ['/realm_authentication_methods'];
/** Documented keys that are present only in some realms. */
const CONDITIONAL = new Set(['demo_organization_scheduled_deletion_date']);

type Schema = Record<string, unknown>;

function loadSpec(): Schema {
  return parseYaml(readFileSync(OPENAPI, 'utf8')) as Schema;
}

/**
 * OpenAPI 3.0 to plain JSON Schema as Zulip's own test tooling reads it: $refs inlined,
 * allOf merged into one object schema (so additionalProperties:false sees every property),
 * nullable as a null type, oneOf as anyOf (integer is also a number).
 */
function toJsonSchema(spec: Schema, s: unknown): Schema {
  if (!s || typeof s !== 'object') return {};
  let node = s as Schema;
  while (typeof node.$ref === 'string') {
    const [, , section, name] = node.$ref.split('/');
    node = ((spec.components as Schema)[section as string] as Schema)[name as string] as Schema;
  }
  if (Array.isArray(node.allOf)) {
    const parts = node.allOf.map((p) => toJsonSchema(spec, p));
    const merged: Schema = {};
    for (const p of parts) {
      for (const [k, v] of Object.entries(p)) {
        if (k === 'properties') merged.properties = { ...((merged.properties as Schema) ?? {}), ...(v as Schema) };
        else if (k === 'required') merged.required = [...new Set([...((merged.required as string[]) ?? []), ...(v as string[])])];
        else if (k === 'additionalProperties' && v === false) merged.additionalProperties = false;
        else if (!(k in merged)) merged[k] = v;
      }
    }
    return merged;
  }
  const out: Schema = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'properties') out.properties = Object.fromEntries(Object.entries(v as Schema).map(([p, ps]) => [p, toJsonSchema(spec, ps)]));
    else if (k === 'items') out.items = toJsonSchema(spec, v);
    else if (k === 'additionalProperties') out.additionalProperties = typeof v === 'boolean' ? v : toJsonSchema(spec, v);
    else if (k === 'oneOf' || k === 'anyOf') out.anyOf = (v as unknown[]).map((x) => toJsonSchema(spec, x));
    else if (['type', 'enum', 'required', 'minimum', 'maximum'].includes(k)) out[k] = v;
  }
  if (node.nullable === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    else return { anyOf: [out, { type: 'null' }] };
    if (Array.isArray(out.enum)) out.enum = [...out.enum, null];
  }
  return out;
}

/** The feature level a documented key appeared at ("New in Zulip X (feature level N)"), if said. */
function introducedAt(raw: Schema): number | undefined {
  const texts = [raw.description, ...((raw.allOf as Schema[] | undefined) ?? []).map((p) => p.description)].filter((d) => typeof d === 'string') as string[];
  // "New in Zulip 7.0 (feature level 163)", "In Zulip 9.0 (feature level 241), renamed ..." and
  // "In Zulip 7.0 (feature level 168), replaced previous ..." all mean: absent at lower levels.
  const patterns = [
    /(?:New|Added) in Zulip [\d.]+\s+\(feature\s+level\s+(\d+)\)/,
    /In Zulip [\d.]+\s+\(feature\s+level\s+(\d+)\),\s+(?:renamed|replaced)/,
  ];
  for (const d of texts) {
    for (const re of patterns) {
      const m = re.exec(d);
      if (m) return Number(m[1]);
    }
  }
  return undefined;
}

/** The fetch type a documented key belongs to ("Present if `x` is present in `fetch_event_types`"). */
function fetchTypeOf(raw: Schema): string | undefined {
  const d = typeof raw.description === 'string' ? raw.description : '';
  return /Present if `(\w+)` is present in `fetch_event_types`/.exec(d)?.[1];
}

function deref(spec: Schema, s: Schema): Schema {
  let n = s;
  while (typeof n.$ref === 'string') {
    const [, , section, name] = n.$ref.split('/');
    n = ((spec.components as Schema)[section as string] as Schema)[name as string] as Schema;
  }
  return n;
}

function registerDoc(spec: Schema): { schema: Schema; raw: Record<string, Schema> } {
  const post = ((spec.paths as Schema)['/register'] as Schema).post as Schema;
  const raw200 = ((((post.responses as Schema)['200'] as Schema).content as Schema)['application/json'] as Schema).schema as Schema;
  const schema = toJsonSchema(spec, raw200);
  // The undocumented-merge raw properties, to read their descriptions.
  const raw: Record<string, Schema> = {};
  const collect = (s: Schema) => {
    const n = deref(spec, s);
    for (const p of (n.allOf as Schema[] | undefined) ?? []) collect(p);
    Object.assign(raw, (n.properties as Record<string, Schema> | undefined) ?? {});
  };
  collect(raw200);
  return { schema, raw };
}

/** Allows our level's legacy names where Zulip's description no longer has them. */
function allowLegacy(schema: Schema): Schema {
  const props = { ...(schema.properties as Schema) };
  for (const k of [...LEGACY_TOP_LEVEL, ...OUR_NAMES]) props[k] ??= {};
  for (const k of ['user_settings', 'realm_user_settings_defaults']) {
    const inner = props[k] as Schema | undefined;
    if (inner?.properties) props[k] = { ...inner, properties: { ...(inner.properties as Schema), ...Object.fromEntries(LEGACY_SETTINGS.map((n) => [n, {}])) } };
  }
  // is_billing_admin was part of every user object until FL 363.
  for (const k of ['realm_users', 'realm_non_active_users', 'cross_realm_bots']) {
    const list = props[k] as Schema | undefined;
    const item = list?.items as Schema | undefined;
    if (item?.properties) props[k] = { ...list, items: { ...item, properties: { ...(item.properties as Schema), is_billing_admin: { type: 'boolean' } } } };
  }
  for (const path of SHAPE_CHANGED_AFTER_OUR_LEVEL) props[path.slice(1)] = { type: 'object' };
  return { ...schema, properties: props };
}

const absent = existsSync(OPENAPI) ? false : `Zulip's OpenAPI description is not at ${OPENAPI} (set ZC_ZULIP_OPENAPI to check /register against it)`;

t.test('/register matches Zulip\'s OpenAPI description at our feature level', { skip: absent }, async (t) => {
  const spec = loadSpec();
  const { schema, raw } = registerDoc(spec);
  const ajv = new Ajv({ strict: false, allErrors: true });
  const validate = ajv.compile(allowLegacy(schema));
  const sys = await startSystem(t);
  const h = sys.client(sys.people.hamlet);

  const expectedKeys = (fetched: (type: string) => boolean) =>
    Object.keys(raw).filter((k) => {
      if (['result', 'msg', 'ignored_parameters_unsupported'].includes(k) || CONDITIONAL.has(k)) return false;
      const at = introducedAt(raw[k] as Schema);
      if (at !== undefined && at > FEATURE_LEVEL) return false;
      const type = fetchTypeOf(raw[k] as Schema);
      return type === undefined || fetched(type);
    });

  for (const [label, params, legacy] of [
    ['a client of our level (no user_settings_object)', {}, true],
    ['a client declaring user_settings_object', { client_capabilities: { user_settings_object: true } }, false],
  ] as const) {
    t.test(label, async (t) => {
      const state = (await register(h, params)) as Json;
      const ok = validate(state);
      t.ok(ok, 'every key has the documented type');
      if (!ok) {
        for (const e of validate.errors ?? []) t.comment(`${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
      }
      const isLegacyType = (type: string) => type === 'update_display_settings' || type === 'update_global_notifications';
      const missing = expectedKeys((type) => !isLegacyType(type) || legacy).filter((k) => !(k in state));
      // Renamed after our level: the old name stands in (web_home_view was default_view).
      t.same(missing.filter((k) => k !== 'web_home_view'), [], 'every documented key of our level is present');
      if (legacy) t.ok('default_view' in state, 'the legacy display settings carry their FL 155 names');
      else t.notOk('enable_sounds' in state || 'emojiset' in state, 'no legacy top-level settings with user_settings_object');

      const settings = state.user_settings as Json;
      const settingsDoc = deref(spec, raw.user_settings as Schema);
      const settingsKeys = Object.entries((toJsonSchema(spec, settingsDoc).properties ?? {}) as Schema).map(([k]) => k);
      const rawSettings = ((settingsDoc.properties ?? {}) as Record<string, Schema>);
      const expectedSettings = settingsKeys.filter((k) => {
        const at = rawSettings[k] ? introducedAt(deref(spec, rawSettings[k] as Schema)) : undefined;
        return at === undefined || at <= FEATURE_LEVEL;
      });
      t.same(expectedSettings.filter((k) => !(k in settings)), [], 'user_settings has every setting of our level');
    });
  }
});
