/**
 * The management CLI as an operator runs it: a child process of scripts/manage.mjs with only
 * the environment given, its last stdout line read as the JSON answer.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { System } from '../harness.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export interface ManageRun {
  code: number | null;
  stdout: string;
  stderr: string;
  json: Record<string, unknown>;
}

export function manage(args: string[], env: Record<string, string>): Promise<ManageRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'scripts/manage.mjs'), ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => {
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(stdout.trim().split('\n').pop() ?? '') as Record<string, unknown>;
      } catch {
        // --help prints text; otherwise the assertion on it says what was wrong
      }
      resolve({ code, stdout, stderr, json });
    });
  });
}

/** The environment that points the CLI at a test system's database, Redis and bus. */
export function manageEnv(sys: System): Record<string, string> {
  return {
    ZC_DATABASE_URL: sys.env.databaseUrl,
    ZC_REDIS_URL: sys.env.infra.redisUrl,
    ZC_NATS_URL: sys.env.infra.natsUrl,
    ZC_SUBJECT_PREFIX: sys.env.prefix,
    ZC_REDIS_PREFIX: sys.env.prefix,
    ZC_SECRET_KEY: sys.env.config.secretKey as string,
  };
}
