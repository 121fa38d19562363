/**
 * What this machine and this load generator give at best: a bare Node HTTP server in a process
 * of its own answering fixed bytes (a scenario's own answer, captured), measured with the same
 * generator, rate, duration and response check as the scenario's step. A budget near these
 * figures is near the noise of the machine (the loopback's copies, the two event loops, the
 * generator's own reading of the answers, the scheduler), not the server's work.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { runStep, Targets, type ResponseCheck, type StepResult } from './load.js';

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

/** One step (after `warmSeconds` untimed) against the bare server answering `body`. */
export async function floorStep(body: string, o: { rate: number; durationSeconds: number; warmSeconds?: number; check?: ResponseCheck; checkEvery?: number }): Promise<StepResult> {
  const dir = mkdtempSync(join(tmpdir(), 'zc-floor-'));
  const file = join(dir, 'answer.json');
  writeFileSync(file, body);
  const child = spawn(process.execPath, ['-e', SERVER, file], { stdio: ['pipe', 'pipe', 'inherit'] });
  try {
    const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
    const targets = new Targets([`http://127.0.0.1:${Number(line)}`]);
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
  } finally {
    child.stdin?.end();
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}
