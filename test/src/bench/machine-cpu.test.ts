/**
 * CPU of processes the bench does not start (machine-cpu.ts): found by command line, measured
 * between two readings, with processes that come and go.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import t from 'tap';
import { INFRASTRUCTURE, groupCpuBetween, groupCpuMeter, processesMatching } from './machine-cpu.js';

t.test('a process found by its command line, and the CPU it burns between two readings', async (t) => {
  const marker = `zc-machine-cpu-${process.pid}-${Date.now()}`;
  // On 'go' it burns 200 ms of CPU (by its own count, so a loaded machine only makes it take
  // longer), says 'done' and idles; the marker is in its command line.
  const script = `process.stdin.once('data', () => { const s = process.cpuUsage(); while (process.cpuUsage(s).user < 200_000); process.stdout.write('done'); setInterval(() => {}, 1000); });`;
  const child = spawn(process.execPath, ['-e', script, marker], { stdio: ['pipe', 'pipe', 'ignore'] });
  t.teardown(() => void child.kill());
  await once(child, 'spawn');
  const found = processesMatching(new RegExp(marker));
  t.equal(found.length, 1, 'the child alone matches');
  t.equal(found[0]?.pid, child.pid);
  const meter = groupCpuMeter([{ name: 'busy', pattern: new RegExp(marker) }]);
  child.stdin.write('go\n');
  await once(child.stdout, 'data');
  const used = meter().busy ?? 0;
  // /proc counts in 10 ms ticks, and adds the system time of its many getrusage calls.
  t.ok(used >= 0.17 && used < 5, `CPU seconds measured: ${used}`);
});

t.test('between readings: new processes count whole, ended ones are left out, each group apart', async (t) => {
  const before = { postgres: new Map([[10, 1.5], [11, 0.2]]), nats: new Map([[20, 3]]) };
  const after = { postgres: new Map([[10, 2], [12, 0.3]]), nats: new Map([[20, 3.25]]), redis: new Map([[30, 0.1]]) };
  const used = groupCpuBetween(before, after);
  t.equal(Math.round((used.postgres ?? 0) * 100), 80, 'backend 10 used 0.5, backend 12 (new) 0.3, backend 11 ended');
  t.equal(used.nats, 0.25);
  t.equal(used.redis, 0.1, 'a group missing from the first reading counts whole');
});

t.test("the servers' patterns take their processes' command lines and nothing else", async (t) => {
  const match = (name: string, cmd: string) => (INFRASTRUCTURE.find((g) => g.name === name) as { pattern: RegExp }).pattern.test(cmd);
  t.ok(match('postgres', '/usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main -c config_file=/etc/postgresql/15/main/postgresql.conf'), 'postmaster');
  t.ok(match('postgres', 'postgres: 15/main: postgres zc_bench 127.0.0.1(40312) idle'), 'a backend');
  t.ok(match('postgres', 'postgres: 15/main: walwriter'), 'a helper');
  t.notOk(match('postgres', 'node app.js postgres://postgres@127.0.0.1:5432/postgres'), 'a client naming a database URL');
  t.notOk(match('postgres', 'psql -h 127.0.0.1 -U postgres'), 'psql');
  t.ok(match('nats', '/usr/sbin/nats-server -a 127.0.0.1 -p 4222 -js'));
  t.ok(match('redis', 'redis-server 127.0.0.1:6379'));
});
