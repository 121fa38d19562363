/**
 * What this machine and this load generator give at best: a bare Node HTTP server in a process
 * of its own answering fixed bytes (a scenario's own answer, captured), measured with the same
 * generator, rate, duration and response check as the scenario's step. A budget near these
 * figures is near the noise of the machine (the loopback's copies, the two event loops, the
 * generator's own reading of the answers, the scheduler), not the server's work.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { runStep, Targets, type ResponseCheck, type StepResult } from './load.js';
import { PollClient } from './poll-client.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// The whole server: the file's bytes as every answer, once the request's body is read (so a POST is like a ping).
const SERVER = `
const http = require('node:http');
const body = require('node:fs').readFileSync(process.argv[1]);
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => { res.setHeader('content-type', 'application/json'); res.end(body); });
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
`;

interface BareServer {
  port: number;
  /** What the server prints after its port, line by line. */
  lines: AsyncIterator<string>;
  /** A line to the server's standard input. */
  tell(line: string): void;
}

/**
 * Runs `use` against `script`, a bare server in a process of its own that answers the bytes
 * of `body` (its first argument, a file; `args` follow) and prints its port first; the
 * process and the file are gone afterwards.
 */
async function withBareServer<T>(script: string, body: string, args: readonly string[], use: (s: BareServer) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'zc-floor-'));
  const file = join(dir, 'answer.json');
  writeFileSync(file, body);
  const child = spawn(process.execPath, ['-e', script, file, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  try {
    const port = Number((await lines.next()).value);
    if (!Number.isInteger(port)) throw new Error('the bare server did not start');
    return await use({ port, lines, tell: (line) => void child.stdin?.write(`${line}\n`) });
  } finally {
    child.stdin?.end();
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One step (after `warmSeconds` untimed) against the bare server answering `body`. */
export async function floorStep(body: string, o: { rate: number; durationSeconds: number; warmSeconds?: number; check?: ResponseCheck; checkEvery?: number }): Promise<StepResult> {
  return withBareServer(SERVER, body, [], async ({ port }) => {
    const targets = new Targets([`http://127.0.0.1:${port}`]);
    try {
      const target = {
        name: `bare Node server, the same ${Math.round(Buffer.byteLength(body) / 1000)} KB`,
        request: () => ({ method: 'POST' as const, path: '/', body: 'status=active' }),
        ...(o.check ? { check: o.check } : {}),
        ...(o.checkEvery ? { checkEvery: o.checkEvery } : {}),
      };
      if (o.warmSeconds) await runStep(targets, target, { rate: o.rate, durationSeconds: o.warmSeconds });
      return await runStep(targets, target, { rate: o.rate, durationSeconds: o.durationSeconds });
    } finally {
      await targets.close();
    }
  });
}

/**
 * The whole long-poll server: it parks every request and, every `tickMs`, answers all the
 * parked ones with the file's bytes, as a gateway answers the polls one message woke. On the
 * line `start` it notes its CPU; on `stop` it prints its answers and CPU since as JSON.
 */
const LONG_POLL_SERVER = `
const http = require('node:http');
const body = require('node:fs').readFileSync(process.argv[1]);
const parked = [];
let answered = 0;
const server = http.createServer((req, res) => { req.resume(); parked.push(res); });
server.keepAliveTimeout = 75000;
setInterval(() => {
  for (const res of parked.splice(0)) {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length, 'cache-control': 'private, no-store' });
    res.end(body);
    answered++;
  }
}, Number(process.argv[2]));
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
let from;
require('node:readline').createInterface({ input: process.stdin }).on('line', (l) => {
  if (l === 'start') from = { cpu: process.cpuUsage(), answered };
  if (l === 'stop' && from) {
    const c = process.cpuUsage(from.cpu);
    console.log(JSON.stringify({ answers: answered - from.answered, cpuUs: c.user + c.system }));
  }
});
process.stdin.on('end', () => process.exit(0));
`;

export interface LongPollFloor {
  /** Answers the bare server gave in the timed window. */
  answers: number;
  /** Its CPU (user + system) per answer in that window, µs. */
  cpuUsPerAnswer: number;
}

/**
 * What a poll answer costs a bare Node HTTP server in a fan-out's shape on this machine:
 * `connections` clients long-poll it (PollClient, each answer parsed, as the scenario's
 * clients do) and every `tickMs` it answers every parked poll with `body`. The server's own
 * CPU per answer over `seconds`, after `warmSeconds` untimed, is the floor under any Node
 * gateway that answers a poll per delivery; the scenario's gateway CPU per delivery set
 * against it says how much is ours and how much is the machine's.
 */
export async function longPollFloor(body: string, o: { connections: number; tickMs: number; seconds: number; warmSeconds?: number }): Promise<LongPollFloor> {
  return withBareServer(LONG_POLL_SERVER, body, [String(o.tickMs)], async ({ port, lines, tell }) => {
    const url = new URL(`http://127.0.0.1:${port}`);
    const clients: PollClient[] = [];
    let polling = true;
    let failure: Error | undefined;
    const loops = Array.from({ length: o.connections }, async () => {
      const client = new PollClient(url, {});
      clients.push(client);
      while (polling) {
        try {
          const r = await client.get('/');
          if (r.status !== 200) throw new Error(`the bare server answered ${r.status}`);
          JSON.parse(r.body);
        } catch (err) {
          if (polling) failure ??= err as Error;
          return;
        }
      }
    });
    let result: { answers: number; cpuUs: number };
    try {
      await sleep((o.warmSeconds ?? 1) * 1000);
      tell('start');
      await sleep(o.seconds * 1000);
      tell('stop');
      result = JSON.parse(String((await lines.next()).value)) as { answers: number; cpuUs: number };
    } finally {
      polling = false;
      for (const c of clients) c.close();
      await Promise.all(loops);
    }
    // A client that failed while polling makes the figure meaningless.
    if (failure) throw failure;
    if (result.answers === 0) throw new Error('the bare long-poll server answered nothing');
    return { answers: result.answers, cpuUsPerAnswer: result.cpuUs / result.answers };
  });
}
