import { Type, type Static } from '@sinclair/typebox';

/** Roles as Zulip numbers them (spec 2.6). */
export const Role = { OWNER: 100, ADMINISTRATOR: 200, MODERATOR: 300, MEMBER: 400, GUEST: 600 } as const;

/**
 * Who is asking. Set only by the gateway after authentication; services never read identity
 * from anywhere else.
 */
export const Actor = Type.Object({
  realm_id: Type.Integer(),
  user_id: Type.Integer(),
  role: Type.Integer(),
  email: Type.String(),
  full_name: Type.String(),
  is_bot: Type.Boolean(),
  /**
   * The realm's revision when the gateway authenticated the request (users.realm.revision). A
   * realm change gives the realm a new credential token, so the first request after it is
   * authenticated again and carries the new revision: a service whose copy of the realm is
   * older fetches it before applying its policies (Directory.realmFor).
   */
  realm_revision: Type.Optional(Type.Integer()),
});
export type Actor = Static<typeof Actor>;

export const isAdmin = (a: { role: number }) => a.role <= Role.ADMINISTRATOR;
export const isModerator = (a: { role: number }) => a.role <= Role.MODERATOR;
export const isGuest = (a: { role: number }) => a.role >= Role.GUEST;

/** Free-form JSON object (client-visible shapes that pass through unchanged). */
export const JsonObject = Type.Record(Type.String(), Type.Unknown());
export type JsonObject = Static<typeof JsonObject>;

/**
 * Every service that owns part of /register's initial state serves `<service>.v1.register_state`
 * with this request; `fetch` holds the fetch_event_types, `options` the register parameters
 * (apply_markdown, client_gravatar, include_subscribers, narrow, all_public_streams,
 * client_capabilities). The reply's `snapshot` is the PostgreSQL snapshot the state was read
 * in (db/readWithSnapshot), so the events service can drop queued events the state already holds.
 */
export const RegisterStateRequest = Type.Object({
  actor: Actor,
  fetch: Type.Array(Type.String()),
  options: JsonObject,
});
export type RegisterStateRequest = Static<typeof RegisterStateRequest>;
/** Written with `registerStateReply` (register-state.ts): `keys` lists the state's keys, the state comes last. */
export const RegisterStateReply = Type.Object({ snapshot: Type.String(), keys: Type.Optional(Type.Array(Type.String())), state: JsonObject });
export type RegisterStateReply = Static<typeof RegisterStateReply>;
