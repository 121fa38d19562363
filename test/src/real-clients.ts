/**
 * Where the real clients live (../shared/clients, beside the repository, as given to us) and how
 * tests run python-zulip-api scripts against a system. Tests that drive a client skip, saying
 * why, when the checkout, python3 or the client's Python dependencies are absent.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const CLIENTS_DIR = process.env.ZC_CLIENTS_DIR ?? fileURLToPath(new URL('../../../shared/clients/', import.meta.url));

/** python-zulip-api's package directory (what goes on PYTHONPATH for `import zulip`). */
export const PYTHON_ZULIP_DIR = process.env.ZC_PYTHON_ZULIP_DIR ?? path.join(CLIENTS_DIR, 'python-zulip-api', 'zulip');
export const ZULIP_TERMINAL_DIR = process.env.ZC_ZULIP_TERMINAL_DIR ?? path.join(CLIENTS_DIR, 'zulip-terminal');
/** Debian's python3, which has the clients' dependencies as python3-* packages (.ci/run installs them). */
export const PYTHON = '/usr/bin/python3';

const lastLine = (e: unknown) => String((e as { stderr?: Buffer }).stderr ?? e).trim().split('\n').at(-1);

/** Why python-zulip-api cannot run here, or undefined when it can. */
export function pythonZulipMissing(): string | undefined {
  if (!existsSync(PYTHON)) return `no ${PYTHON}`;
  if (!existsSync(path.join(PYTHON_ZULIP_DIR, 'zulip'))) return `python-zulip-api not found at ${PYTHON_ZULIP_DIR} (ZC_PYTHON_ZULIP_DIR)`;
  try {
    execFileSync(PYTHON, ['-c', 'import zulip'], { env: { ...process.env, PYTHONPATH: PYTHON_ZULIP_DIR }, stdio: 'pipe' });
    return undefined;
  } catch (e) {
    return `python-zulip-api's dependencies are missing: ${lastLine(e)}`;
  }
}

/** Runs a Python script with python-zulip-api importable; resolves with its stdout. */
export function runPythonZulip(script: string, args: readonly string[], timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(PYTHON, ['-c', script, ...args], { env: { ...process.env, PYTHONPATH: PYTHON_ZULIP_DIR }, timeout: timeoutMs }, (err, out, errOut) =>
      err ? reject(new Error(`${err.message}\n${errOut}`)) : resolve(out),
    );
  });
}

export { lastLine as lastStderrLine };
