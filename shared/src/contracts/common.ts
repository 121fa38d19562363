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
});
export type Actor = Static<typeof Actor>;

export const isAdmin = (a: { role: number }) => a.role <= Role.ADMINISTRATOR;
export const isModerator = (a: { role: number }) => a.role <= Role.MODERATOR;
export const isGuest = (a: { role: number }) => a.role >= Role.GUEST;

/** Free-form JSON object (client-visible shapes that pass through unchanged). */
export const JsonObject = Type.Record(Type.String(), Type.Unknown());
export type JsonObject = Static<typeof JsonObject>;
