/** The drafts service: a user's message drafts, synchronised between their clients (schema `drafts`). */
import { Type, type Static } from '@sinclair/typebox';
import { rpc } from '../bus/contract.js';
import { Actor, RegisterStateReply, RegisterStateRequest } from './common.js';

/** A draft as clients send it (spec 2.7): no id; the server fills in a missing timestamp. */
export const DraftInput = Type.Object({
  type: Type.Union([Type.Literal(''), Type.Literal('stream'), Type.Literal('private')]),
  to: Type.Array(Type.Integer()),
  topic: Type.String(),
  content: Type.String(),
  timestamp: Type.Optional(Type.Number()),
});
export type DraftInput = Static<typeof DraftInput>;

/** A draft as clients receive it (GET /drafts, /register, drafts events). */
export const Draft = Type.Object({
  id: Type.Integer(),
  type: Type.Union([Type.Literal(''), Type.Literal('stream'), Type.Literal('private')]),
  to: Type.Array(Type.Integer()),
  topic: Type.String(),
  content: Type.String(),
  timestamp: Type.Integer(),
});
export type Draft = Static<typeof Draft>;

export const drafts = {
  list: rpc('drafts.v1.list', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ actor: Actor }),
    reply: Type.Object({ count: Type.Integer(), drafts: Type.Array(Draft) }),
  }),
  create: rpc('drafts.v1.create', {
    request: Type.Object({ actor: Actor, drafts: Type.Array(DraftInput) }),
    reply: Type.Object({ ids: Type.Array(Type.Integer()) }),
  }),
  edit: rpc('drafts.v1.edit', {
    request: Type.Object({ actor: Actor, draft_id: Type.Integer(), draft: DraftInput }),
    reply: Type.Object({}),
  }),
  remove: rpc('drafts.v1.remove', {
    request: Type.Object({ actor: Actor, draft_id: Type.Integer() }),
    reply: Type.Object({}),
  }),
  /** /register's `drafts`. */
  registerState: rpc('drafts.v1.register_state', { request: RegisterStateRequest, reply: RegisterStateReply, safe: true }),
} as const;
