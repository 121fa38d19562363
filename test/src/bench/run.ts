/**
 * `npm run bench [-- names… options]`: starts a system of its own (or uses ZC_BENCH_BASE_URL),
 * runs the chosen scenarios one after another, prints a table and writes
 * bench-results/<timestamp>.json. README.md beside this file lists the options.
 */
import { execFile } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import { rampUp, runStep, Targets } from './load.js';
import { loadScenarios } from './registry.js';
import { formatReport, writeReport, type RunReport, type ScenarioOutcome } from './report.js';
import type { BenchOptions, Scenario } from './scenario.js';
import { childSystem, externalSystem, type StartedBenchSystem } from './system.js';

const DEFAULT_RATES = [250, 500, 1000, 2000, 4000];
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

const log = (line: string) => process.stderr.write(`${line}\n`);

function numbers(text: string, what: string): number[] {
  const out = text.split(',').map((s) => Number(s.trim()));
  if (out.length === 0 || out.some((n) => !Number.isFinite(n) || n <= 0)) throw new Error(`${what} must be positive numbers separated by commas, got ${text}`);
  return out;
}

function keyValues(items: readonly string[], what: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of items.flatMap((s) => s.split(','))) {
    const i = item.indexOf('=');
    if (i <= 0) throw new Error(`${what} takes key=value, got ${item}`);
    out[item.slice(0, i).trim()] = item.slice(i + 1).trim();
  }
  return out;
}

interface Cli {
  names: string[];
  list: boolean;
  options: BenchOptions;
  replicas: Record<string, number>;
  outDir: string;
}

function parseCli(argv: string[], env = process.env): Cli {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'step-seconds': { type: 'string' },
      rates: { type: 'string' },
      'p99-ms': { type: 'string' },
      replicas: { type: 'string' },
      opt: { type: 'string', multiple: true },
      out: { type: 'string' },
      list: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write('usage: npm run bench -- [scenario …] [--step-seconds 3] [--rates 250,500,1000,2000,4000] [--p99-ms 50]\n');
    process.stdout.write('                         [--replicas gateway=2,users=2] [--opt key=value …] [--out dir] [--list]\n');
    process.exit(0);
  }
  const names = positionals.length ? positionals : (env.ZC_BENCH_SCENARIOS ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  const stepSeconds = Number(values['step-seconds'] ?? env.ZC_BENCH_STEP_SECONDS ?? 3);
  const p99BudgetMs = Number(values['p99-ms'] ?? env.ZC_BENCH_P99_MS ?? 50);
  if (!(stepSeconds > 0) || !(p99BudgetMs > 0)) throw new Error('--step-seconds and --p99-ms must be positive numbers');
  const replicasText = values.replicas ?? env.ZC_BENCH_REPLICAS;
  const replicas = Object.fromEntries(
    Object.entries(replicasText ? keyValues([replicasText], '--replicas') : {}).map(([k, v]) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1) throw new Error(`--replicas ${k}=${v}: need a whole number ≥ 1`);
      return [k, n];
    }),
  );
  return {
    names,
    list: values.list ?? false,
    options: {
      stepSeconds,
      rates: numbers(values.rates ?? env.ZC_BENCH_RATES ?? DEFAULT_RATES.join(','), '--rates'),
      p99BudgetMs,
      extra: keyValues([...(values.opt ?? []), ...(env.ZC_BENCH_OPTS ? [env.ZC_BENCH_OPTS] : [])], '--opt'),
    },
    replicas,
    outDir: values.out ?? env.ZC_BENCH_OUT ?? `${REPO_ROOT}bench-results`,
  };
}

function choose(all: Scenario[], names: string[]): Scenario[] {
  if (names.length === 0) return all.filter((s) => s.default !== false);
  return names.map((n) => {
    const s = all.find((x) => x.name === n);
    if (!s) throw new Error(`unknown scenario ${n}; known: ${all.map((x) => x.name).join(', ')}`);
    return s;
  });
}

async function gitCommit(): Promise<string | undefined> {
  try {
    const { stdout } = await promisify(execFile)('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT });
    return stdout.trim();
  } catch {
    return undefined;
  }
}

/**
 * Errors no scenario awaited (a poll loop still running after its client closed, say). They
 * are logged and kept with the scenario that was running, instead of ending the whole run
 * and losing every result so far.
 */
const strayErrors: string[] = [];
process.on('unhandledRejection', (err) => {
  const text = (err as Error)?.stack ?? String(err);
  strayErrors.push(text.split('\n')[0] ?? text);
  log(`warning: an unawaited error surfaced (from this scenario or an earlier one): ${text}`);
});

async function runScenario(s: Scenario, started: StartedBenchSystem, targets: Targets, options: BenchOptions): Promise<ScenarioOutcome> {
  const t0 = Date.now();
  const outcome = (o: Partial<ScenarioOutcome>): ScenarioOutcome => {
    const stray = strayErrors.splice(0);
    return { name: s.name, description: s.description, seconds: (Date.now() - t0) / 1000, ...(stray.length ? { stray_errors: stray } : {}), ...o };
  };
  const { sys } = started;
  const cpu = started.cpuSeconds ? { cpuSeconds: started.cpuSeconds } : {};
  if (s.needsInProcess && sys.mode === 'external') return outcome({ skipped: 'needs the runner\'s own system' });
  log(`▶ ${s.name}: ${s.description}`);
  let state: unknown;
  try {
    state = s.setup ? await s.setup(sys, options) : undefined;
    const result = await s.run({
      sys,
      options,
      state,
      log: (line) => log(`  ${line}`),
      rampUp: (target, o = {}) => rampUp(targets, target, { ...options, ...o, log, ...cpu }),
      runStep: (target, o) => runStep(targets, target, { ...cpu, ...o }),
      ...(started.cpuSeconds ? { cpuSeconds: started.cpuSeconds } : {}),
      ...(started.cpuSecondsByService ? { cpuSecondsByService: started.cpuSecondsByService } : {}),
      ...(started.gatewayMetrics ? { gatewayMetrics: started.gatewayMetrics } : {}),
    });
    return outcome({ result });
  } catch (err) {
    log(`  ${s.name} failed: ${(err as Error).stack ?? String(err)}`);
    return outcome({ error: (err as Error).message ?? String(err) });
  } finally {
    await s.teardown?.(sys, state).catch((err: unknown) => log(`  ${s.name} teardown failed: ${String(err)}`));
  }
}

async function main(): Promise<number> {
  const cli = parseCli(process.argv.slice(2));
  const { scenarios: all, broken } = await loadScenarios();
  for (const b of broken) log(`warning: scenario module ${b.module} did not load: ${b.error}`);
  if (cli.list) {
    for (const s of all) process.stdout.write(`${s.name.padEnd(24)} ${s.default === false ? '(not default) ' : ''}${s.description}\n`);
    return 0;
  }
  const chosen = choose(all, cli.names);
  const startedAt = new Date();
  const loadAtStart = os.loadavg();
  // The budgets assume a machine doing nothing else; say so when it is not.
  if ((loadAtStart[0] ?? 0) > os.cpus().length * 0.5) {
    log(`warning: load average ${loadAtStart[0]?.toFixed(1)} on ${os.cpus().length} CPUs: other work will depress these figures`);
  }
  const started = process.env.ZC_BENCH_BASE_URL ? await externalSystem() : await childSystem(cli.replicas);
  const targets = new Targets(started.sys.gatewayUrls);
  const outcomes: ScenarioOutcome[] = [];
  try {
    log(`system: ${started.sys.mode} at ${started.sys.gatewayUrls.join(', ')}`);
    // A fresh system is still busy for a moment (consumers catching up, outboxes relaying, JIT).
    const settleSeconds = Number(process.env.ZC_BENCH_SETTLE_SECONDS ?? (started.sys.mode === 'inprocess' ? 3 : 0));
    if (settleSeconds > 0) await new Promise((r) => setTimeout(r, settleSeconds * 1000));
    for (const s of chosen) outcomes.push(await runScenario(s, started, targets, cli.options));
  } finally {
    await targets.close();
    await started.stop();
  }
  // Errors that surfaced after the last scenario's outcome was taken.
  const lateErrors = [...strayErrors];
  const report: RunReport = {
    started_at: startedAt.toISOString(),
    finished_at: new Date().toISOString(),
    meta: {
      commit: await gitCommit(),
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
      cpus: os.cpus().length,
      cpu_model: os.cpus()[0]?.model,
      load_average_at_start: loadAtStart,
      load_average_at_end: os.loadavg(),
      mode: started.sys.mode,
      gateway_urls: started.sys.gatewayUrls,
      replicas: started.replicas,
      layout: started.layout,
      broken_scenario_modules: broken,
      ...(lateErrors.length ? { stray_errors_after_last_scenario: lateErrors } : {}),
    },
    options: { ...cli.options, scenarios: chosen.map((s) => s.name) },
    scenarios: outcomes,
  };
  process.stdout.write(`\n${formatReport(report)}\n`);
  const file = await writeReport(cli.outDir, report);
  log(`\nfull results: ${file}`);
  return outcomes.some((o) => o.error) ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    log(`bench: ${(err as Error).message ?? String(err)}`);
    process.exit(2);
  },
);
