/**
 * A long-poll client for the fan-out scenarios: one keep-alive connection that sends a GET
 * and reads its answer, nothing more.
 *
 * Why not undici, like the rest of the bench: the load generator shares the machine with the
 * system it measures. At 100 msg/s to 50 queues it makes about 5,000 poll round trips a
 * second, and through undici's Pool each cost it about 70 µs of CPU (2.8 s of every 8 s,
 * the second-largest process after the gateway), CPU the services then waited for. This
 * client writes a request it has already formatted and parses only what an answer of the
 * gateway needs: the status line, Content-Length, one header asked for, the body.
 *
 * It is not a general HTTP client: an answer without Content-Length (chunked) or one asking
 * to close the connection is an error, and the caller's loop reconnects.
 */
import { connect, type Socket } from 'node:net';

export interface PollAnswer {
  status: number;
  body: string;
  /** The value of the header named in the constructor, if the answer had it. */
  header?: string;
}

const HEAD_END = Buffer.from('\r\n\r\n');
/** Refuse a head beyond this (the gateway's are a few hundred bytes). */
const MAX_HEAD = 16 * 1024;

export class PollClient {
  private socket?: Socket;
  private buffered: Buffer = Buffer.alloc(0);
  private pending?: { resolve(a: PollAnswer): void; reject(e: Error): void };
  private readonly headerPrefix: string;

  constructor(
    private readonly url: URL,
    /** Headers sent with every request (Host is added from the URL unless given). */
    private readonly headers: Record<string, string>,
    /** One answer header to report (lower case), e.g. the delivery trace. */
    header = '',
  ) {
    this.headerPrefix = header ? `\r\n${header.toLowerCase()}:` : '';
  }

  /** GET `path`; one request at a time. */
  get(path: string): Promise<PollAnswer> {
    if (this.pending) return Promise.reject(new Error('a request is already in flight'));
    const socket = this.socket ?? this.open();
    let head = `GET ${path} HTTP/1.1\r\n`;
    const hasHost = Object.keys(this.headers).some((k) => k.toLowerCase() === 'host');
    if (!hasHost) head += `host: ${this.url.host}\r\n`;
    for (const [k, v] of Object.entries(this.headers)) head += `${k}: ${v}\r\n`;
    head += '\r\n';
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      socket.write(head, 'latin1');
    });
  }

  /** Ends the connection; a request in flight fails. */
  close(): void {
    const socket = this.socket;
    this.socket = undefined;
    this.buffered = Buffer.alloc(0);
    socket?.destroy();
    const p = this.pending;
    this.pending = undefined;
    p?.reject(new Error('closed by the client'));
  }

  private open(): Socket {
    const socket = connect({ host: this.url.hostname, port: Number(this.url.port || 80), noDelay: true });
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    // Only the current socket's end fails the request in flight: a socket given up earlier
    // may report its close after the next request has gone out on a new one.
    const fail = (err: Error) => {
      if (this.socket !== socket) return;
      this.socket = undefined;
      this.buffered = Buffer.alloc(0);
      const p = this.pending;
      this.pending = undefined;
      p?.reject(err);
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('connection closed')));
    this.socket = socket;
    return socket;
  }

  private onData(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const end = this.buffered.indexOf(HEAD_END);
    if (end < 0) {
      if (this.buffered.length > MAX_HEAD) this.broken('answer head too long');
      return;
    }
    const head = this.buffered.toString('latin1', 0, end);
    const lower = head.toLowerCase();
    const status = Number(head.slice(9, 12));
    const length = headerValue(lower, '\r\ncontent-length:');
    if (!head.startsWith('HTTP/1.1 ') || !Number.isInteger(status) || length === undefined) return this.broken(`answer not understood: ${head.slice(0, 80)}`);
    const bodyStart = end + HEAD_END.length;
    const bodyEnd = bodyStart + Number(length);
    if (this.buffered.length < bodyEnd) return;
    if (this.buffered.length > bodyEnd) return this.broken('bytes after the answer (no request was pipelined)');
    const body = this.buffered.toString('utf8', bodyStart, bodyEnd);
    this.buffered = Buffer.alloc(0);
    const header = this.headerPrefix ? headerValue(lower, this.headerPrefix, head) : undefined;
    const closing = headerValue(lower, '\r\nconnection:') === 'close';
    const p = this.pending;
    this.pending = undefined;
    if (closing) this.close();
    p?.resolve({ status, body, ...(header !== undefined ? { header } : {}) });
  }

  private broken(why: string): void {
    this.socket?.destroy(new Error(why));
  }
}

/** A header's trimmed value, found by its lower-cased `\r\nname:` prefix (read from `original` to keep its case). */
function headerValue(lower: string, prefix: string, original = lower): string | undefined {
  const at = lower.indexOf(prefix);
  if (at < 0) return undefined;
  const from = at + prefix.length;
  const to = lower.indexOf('\r\n', from);
  return original.slice(from, to < 0 ? undefined : to).trim();
}
