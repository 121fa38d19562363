/**
 * The load-test kit works from its own directory against any base URL: the seeder creates
 * users, streams and history through the public API only, is idempotent per --run, and
 * writes accounts whose keys work; the k6 scenario parses as the ES module k6 loads.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { ApiClient } from '../client.js';
import { startSystem } from '../harness.js';

const KIT = fileURLToPath(new URL('../../../loadtest/', import.meta.url));

function node(args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, args, { cwd, env: { PATH: process.env.PATH ?? '' } }, (_e, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }));
  });
}

t.test('seeder through the API, then the accounts work', async (t) => {
  const sys = await startSystem(t);
  // Run from a copy's point of view: a directory of its own, nothing of the repository around it.
  const work = mkdtempSync(path.join(os.tmpdir(), 'zc-loadtest-'));
  t.teardown(() => rmSync(work, { recursive: true, force: true }));
  const args = ['--base-url', sys.baseUrl, '--email', sys.people.iago.email, '--api-key', sys.people.iago.api_key, '--run', 'lt7', '--users', '4', '--streams', '2', '--messages', '3', '--out', path.join(work, 'accounts.json')];
  const seed = await node([path.join(KIT, 'seed.mjs'), ...args], work);
  t.equal(seed.code, 0, seed.stderr);
  t.same(JSON.parse(seed.stdout), { users: 4, streams: 2, messages: 6, out: path.join(work, 'accounts.json') });
  const out = JSON.parse(readFileSync(path.join(work, 'accounts.json'), 'utf8')) as { streams: string[]; accounts: Array<{ email: string; api_key: string; user_id: number }> };
  t.same(out.streams, ['lt7-stream0', 'lt7-stream1']);
  t.equal(out.accounts.length, 4);
  for (const a of out.accounts) {
    const c = new ApiClient(sys.baseUrl, { email: a.email, apiKey: a.api_key });
    const subs = await c.call<{ subscriptions: Array<{ name: string }> }>('GET', '/users/me/subscriptions');
    t.same(subs.body.subscriptions.map((s) => s.name).sort(), out.streams, `${a.email}: its key works, subscribed to every stream`);
  }
  const reader = new ApiClient(sys.baseUrl, { email: out.accounts[0]?.email ?? '', apiKey: out.accounts[0]?.api_key ?? '' });
  const hist = await reader.call<{ messages: unknown[] }>('GET', '/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: JSON.stringify([{ operator: 'stream', operand: 'lt7-stream1' }]) });
  t.equal(hist.body.messages.length, 3, 'history written');

  const again = await node([path.join(KIT, 'seed.mjs'), ...args], work);
  t.equal(again.code, 0, `a second run with the same --run reuses the users: ${again.stderr}`);
  const bad = await node([path.join(KIT, 'seed.mjs'), '--base-url', sys.baseUrl, '--email', 'nobody@x.test', '--api-key', 'nope'], work);
  t.equal(bad.code, 1);
  t.match(bad.stderr, /cannot authenticate as nobody@x\.test/);
});

t.test('the k6 scenario is an ES module k6 can load', async (t) => {
  const src = readFileSync(path.join(KIT, 'k6/chat.js'), 'utf8');
  const check = await new Promise<number | null>((resolve) => {
    const child = execFile(process.execPath, ['--input-type=module', '--check'], () => resolve(child.exitCode));
    child.stdin?.end(src);
  });
  t.equal(check, 0, 'k6/chat.js parses');
  t.match(src, /import http from 'k6\/http'/);
  t.match(src, /send_to_receive/, 'reports the send-to-receive latency');
});
