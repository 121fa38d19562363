/**
 * ZC_TEST_INFRA=containers without what testcontainers needs (a Docker engine, Node 22+)
 * stops with one sentence saying so and what to use instead, not a library's stack trace.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function infraWith(env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const script = `import('@zc/shared/testing').then((m) => m.testInfra()).then((i) => console.log(JSON.stringify(i)), (e) => { console.log(e.message); process.exit(3); })`;
  return new Promise((resolve) => {
    // PATH holds node only: no `docker` to answer.
    const child = execFile(process.execPath, ['--input-type=module', '-e', script], { cwd: path.join(ROOT, 'shared'), env: { PATH: path.dirname(process.execPath), ...env } }, (_err, stdout) =>
      resolve({ code: child.exitCode, out: stdout.trim() }),
    );
  });
}

t.test('containers mode without a Docker engine fails clearly', async (t) => {
  const r = await infraWith({ ZC_TEST_INFRA: 'containers' });
  t.equal(r.code, 3);
  t.match(r.out, /^ZC_TEST_INFRA=containers needs Node 22 or newer \(testcontainers\) and a Docker engine/);
  t.match(r.out, /use ZC_TEST_INFRA=local/);
});

t.test('auto falls back to the local servers; a wrong mode is named', async (t) => {
  const auto = await infraWith({ ZC_TEST_INFRA: 'auto' });
  t.match(JSON.parse(auto.out), { natsUrl: 'nats://127.0.0.1:4222' });
  const bad = await infraWith({ ZC_TEST_INFRA: 'kubernetes' });
  t.equal(bad.code, 3);
  t.match(bad.out, /ZC_TEST_INFRA must be local, containers or auto, got 'kubernetes'/);
});
