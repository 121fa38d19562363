/**
 * Work stops when the HTTP client leaves (issue 13). A read whose client has disconnected
 * before its answer would otherwise run on in the services for nobody, up to its deadline:
 * a slow narrow holds a database connection and its CPU for 10 s after the user has closed
 * the tab or the client has timed out and retried. Each read's handler runs with a signal
 * that aborts when the connection closes before the response is complete; the bus carries it
 * to the serving replica, which cancels its PostgreSQL statements (shared/src/bus, db).
 *
 * Only reads (GET) are cancelled: a write whose client left may still be wanted (a message
 * sent just before the app went to the background), and stopping it half-way would leave the
 * client as unsure of the outcome as finishing it. Long-polls (GET /events) end their own
 * wait when the gateway closes, and their parking costs no database work.
 */
import type { FastifyInstance, RouteHandlerMethod } from 'fastify';
import fp from 'fastify-plugin';
import { withCallerSignal } from '@zc/shared/bus';

const isLongPoll = (url: string) => url.endsWith('/events');

export default fp(
  async (app: FastifyInstance) => {
    app.addHook('onRoute', (route) => {
      const methods = [route.method].flat();
      if (!methods.includes('GET') || isLongPoll(route.url)) return;
      const handler = route.handler as RouteHandlerMethod;
      route.handler = function (this: FastifyInstance, request, reply) {
        const gone = new AbortController();
        // 'close' comes once, when the response has been sent or the connection has dropped.
        reply.raw.once('close', () => {
          if (!reply.raw.writableFinished) gone.abort();
        });
        return withCallerSignal(gone.signal, () => handler.call(this, request, reply));
      } as RouteHandlerMethod;
    });
  },
  { name: 'caller-gone' },
);
