/**
 * NATS writes coalesced per turn of the event loop. nats.js flushes its outbound buffer in a
 * microtask after the first command queued, so a service handling many messages that arrived
 * in separate socket reads (a gateway's long-polls, each re-polling after a fan-out) writes
 * once per message; each loopback write is a trip through the kernel's TCP stack, and those
 * were the largest item in the gateway's and events service's CPU profiles under fan-out.
 * Deferring the flush to `setImmediate` sends what every callback of the turn queued as one
 * write. Order is unchanged (one buffer, drained in order); a large buffer still goes at once.
 *
 * This reaches into the client's protocol handler (nats.js 3.x: `protocol.sendCommand`,
 * `outbound`, `pendingLimit`, `flushPending`); when that shape is not there (another client
 * version) nothing is changed and the client's own flushing stays.
 */
import type { NatsConnection } from '@nats-io/nats-core';

interface Outbound {
  length(): number;
  size(): number;
  fill(buf: Uint8Array, ...payloads: Uint8Array[]): void;
}

interface Protocol {
  outbound: Outbound;
  pendingLimit: number;
  flushPending(): void;
  sendCommand(cmd: string | Uint8Array, ...payloads: Uint8Array[]): void;
}

const enc = new TextEncoder();

/** Returns whether the flush could be deferred (false: the client's shape is not the known one). */
export function coalesceWrites(nc: NatsConnection): boolean {
  const proto = (nc as unknown as { protocol?: Partial<Protocol> }).protocol;
  if (
    !proto ||
    typeof proto.sendCommand !== 'function' ||
    typeof proto.flushPending !== 'function' ||
    typeof proto.pendingLimit !== 'number' ||
    typeof proto.outbound?.fill !== 'function' ||
    typeof proto.outbound.length !== 'function' ||
    typeof proto.outbound.size !== 'function'
  ) {
    return false;
  }
  const p = proto as Protocol;
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    p.flushPending();
  };
  p.sendCommand = (cmd, ...payloads) => {
    p.outbound.fill(typeof cmd === 'string' ? enc.encode(cmd) : cmd, ...payloads);
    if (p.outbound.size() >= p.pendingLimit) p.flushPending();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  return true;
}
