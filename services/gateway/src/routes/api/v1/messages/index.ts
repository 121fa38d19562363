import type { FastifyInstance } from 'fastify';
import { messagesRpc } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { badRequest } from '@zc/shared/errors';
import { bool, custom, decodeJsonField, int, str } from '@zc/shared/params';
import { params } from '../../../../plugins/params.js';

/** Text exactly as sent (the messages service applies Zulip's content and topic rules). */
const text = () => custom((raw, name) => {
  if (typeof raw === 'string') return raw;
  if (typeof raw === 'number' || typeof raw === 'boolean') return String(raw);
  throw badRequest(`${name} is not a string`, { var_name: name });
});

/** `to`: a string (name, id, JSON list, or comma-separated emails) or decoded JSON from a JSON body. */
const recipients = () => custom((raw) => raw);

/** `anchor`: an integer or one of newest/oldest/first_unread, checked by the service. */
export const anchor = () => custom((raw, name) => {
  if (typeof raw === 'number' || typeof raw === 'string') return raw;
  throw badRequest('Invalid anchor', { var_name: name });
});

/** A JSON list in the form field (narrow), passed on for the service to check. */
export const jsonList = () => custom((raw, name) => decodeJsonField(raw, name));

const IDEMPOTENCY_KEY_MAX = 255;

/** /api/v1/messages: send (spec 4.2), history (spec 4.9), and one message by id. */
export default async function messagesRoutes(app: FastifyInstance) {
  const { bus } = app.deps;

  app.post('/', async (request) => {
    const p = params(request, {
      type: str(),
      to: recipients(),
      content: text(),
      topic: text().optional(),
      subject: text().optional(),
      queue_id: str().optional(),
      local_id: str().optional(),
      read_by_sender: bool().optional(),
    });
    const key = request.headers['idempotency-key'];
    const idempotencyKey = typeof key === 'string' && key !== '' ? key : undefined;
    if (idempotencyKey !== undefined && idempotencyKey.length > IDEMPOTENCY_KEY_MAX) throw badRequest('Idempotency-Key is too long');
    const topic = p.topic ?? p.subject;
    const reply = await bus.request(messagesRpc.send, {
      actor: request.actor,
      client: request.clientName,
      type: p.type,
      to: p.to,
      content: p.content,
      ...(topic !== undefined ? { topic } : {}),
      ...(p.queue_id !== undefined ? { queue_id: p.queue_id } : {}),
      ...(p.local_id !== undefined ? { local_id: p.local_id } : {}),
      ...(p.read_by_sender !== undefined ? { read_by_sender: p.read_by_sender } : {}),
      ...(idempotencyKey !== undefined ? { idempotency_key: idempotencyKey } : {}),
    });
    return success(reply);
  });

  app.get('/', async (request) => {
    const p = params(request, {
      anchor: anchor().optional(),
      include_anchor: bool().optional(true),
      num_before: int({ min: 0 }),
      num_after: int({ min: 0 }),
      narrow: jsonList().optional([]),
      client_gravatar: bool().optional(true),
      apply_markdown: bool().optional(true),
      use_first_unread_anchor: bool().optional(false),
    });
    return success(await bus.request(messagesRpc.list, { actor: request.actor, ...p, anchor: p.anchor ?? null }));
  });

  // Preview rendering (Zulip's render_message_backend).
  app.post('/render', async (request) => {
    const p = params(request, { content: text() });
    return success(await bus.request(messagesRpc.render, { actor: request.actor, content: p.content }));
  });

  app.get<{ Params: { message_id: string } }>('/:message_id', async (request) => {
    const p = params(request, { apply_markdown: bool().optional(true) });
    const id = request.params.message_id;
    if (!/^\d+$/.test(id)) throw badRequest('Invalid message(s)');
    return success(await bus.request(messagesRpc.getOne, { actor: request.actor, message_id: Number(id), apply_markdown: p.apply_markdown }));
  });

  // Edit a message (spec 4.14); the messages service applies every rule, including propagate_mode's values.
  app.patch<{ Params: { message_id: string } }>('/:message_id', async (request) => {
    const p = params(request, {
      content: text().optional(),
      topic: text().optional(),
      subject: text().optional(),
      stream_id: int().optional(),
      propagate_mode: str().optional('change_one'),
      send_notification_to_old_thread: bool().optional(false),
      send_notification_to_new_thread: bool().optional(true),
    });
    const topic = p.topic ?? p.subject;
    await bus.request(messagesRpc.update, {
      actor: request.actor,
      message_id: messageIdOf(request.params.message_id),
      propagate_mode: p.propagate_mode,
      send_notification_to_old_thread: p.send_notification_to_old_thread,
      send_notification_to_new_thread: p.send_notification_to_new_thread,
      ...(p.content !== undefined ? { content: p.content } : {}),
      ...(topic !== undefined ? { topic } : {}),
      ...(p.stream_id !== undefined ? { stream_id: p.stream_id } : {}),
    });
    return success({});
  });

  app.delete<{ Params: { message_id: string } }>('/:message_id', async (request) => {
    params(request, {});
    await bus.request(messagesRpc.deleteMessage, { actor: request.actor, message_id: messageIdOf(request.params.message_id) });
    return success({});
  });

  // Emoji reactions; the messages service resolves names and checks codes and types.
  app.post<{ Params: { message_id: string } }>('/:message_id/reactions', async (request) => {
    const p = params(request, { emoji_name: str(), emoji_code: str().optional(), reaction_type: str().optional() });
    await bus.request(messagesRpc.addReaction, { actor: request.actor, message_id: messageIdOf(request.params.message_id), ...definedOnly(p) });
    return success({});
  });

  app.delete<{ Params: { message_id: string } }>('/:message_id/reactions', async (request) => {
    const p = params(request, { emoji_name: str().optional(), emoji_code: str().optional(), reaction_type: str().optional() });
    await bus.request(messagesRpc.removeReaction, { actor: request.actor, message_id: messageIdOf(request.params.message_id), ...definedOnly(p) });
    return success({});
  });

  app.get<{ Params: { message_id: string } }>('/:message_id/read_receipts', async (request) => {
    params(request, {});
    return success(await bus.request(messagesRpc.readReceipts, { actor: request.actor, message_id: messageIdOf(request.params.message_id) }));
  });

  app.get<{ Params: { message_id: string } }>('/:message_id/history', async (request) => {
    params(request, {});
    return success(await bus.request(messagesRpc.history, { actor: request.actor, message_id: messageIdOf(request.params.message_id) }));
  });
}

/** The parameters that were sent (absent ones are left out rather than undefined). */
function definedOnly<T extends Record<string, unknown>>(o: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> };
}

function messageIdOf(raw: string): number {
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw badRequest('Invalid message(s)');
  return Number(raw);
}
