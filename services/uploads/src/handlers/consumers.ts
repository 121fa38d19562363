/**
 * Domain events this service consumes: the messages service's attachments_changed, which
 * link uploads to messages, and the users service's directory events. Payloads are checked against the contract's schema, not cast.
 */
import { Value } from '@sinclair/typebox/value';
import type { Bus } from '@zc/shared/bus';
import { messagesEvents } from '@zc/shared/contracts';
import { doLinkMessageAttachments } from '../actions/attachments.js';
import type { UploadsDeps } from '../deps.js';

export async function startConsumers(bus: Bus, deps: UploadsDeps): Promise<void> {
  // Realms and users: who may add emoji, and who hears of them.
  await deps.directory.consume('uploads-directory');
  const contract = messagesEvents.messageAttachmentsChanged;
  await bus.consume([contract], { durable: 'uploads-message-attachments' }, async (_subject, payload) => {
    if (!Value.Check(contract.payload, payload)) {
      deps.log.error({ subject: contract.subject }, 'malformed attachments_changed event dropped');
      return;
    }
    await doLinkMessageAttachments(deps, payload);
  });
}
