/**
 * The run's report: a table for the person at the terminal, and a JSON file
 * (bench-results/<timestamp>.json, git-ignored) with everything, including each step's
 * HdrHistogram, for comparing builds.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { StepResult } from './load.js';
import type { Headline, ScenarioResult } from './scenario.js';

export interface ScenarioOutcome {
  name: string;
  description: string;
  /** Absent when the scenario failed or was skipped. */
  result?: ScenarioResult;
  error?: string;
  skipped?: string;
  /** Errors the scenario left unawaited (first lines); they point at bugs in the scenario. */
  stray_errors?: string[];
  seconds: number;
}

export interface RunReport {
  started_at: string;
  finished_at: string;
  meta: Record<string, unknown>;
  options: Record<string, unknown>;
  scenarios: ScenarioOutcome[];
}

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length))) ?? [];
  return rows
    .map((r) => r.map((cell, c) => (c === 0 || c === 1 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0))).join('  ').trimEnd())
    .join('\n');
}

const list = (m: Record<string, number>) =>
  Object.entries(m)
    .map(([k, v]) => `${k}×${v}`)
    .join(' ');

function stepRows(scenario: string, steps: readonly StepResult[]): string[][] {
  return steps.map((s) => {
    const problems = [list(s.codes), list(s.transportErrors), list(s.checkFailures)].filter(Boolean).join(' ');
    return [
      scenario,
      s.target,
      String(s.rate),
      String(s.throughput),
      String(s.sent),
      s.latency.p50.toFixed(2),
      s.latency.p90.toFixed(2),
      s.latency.p99.toFixed(2),
      s.latency.p999.toFixed(2),
      s.latency.max.toFixed(2),
      s.sendLag.p99.toFixed(2),
      s.systemCpuMsPerRequest === undefined ? '' : s.systemCpuMsPerRequest.toFixed(2),
      String(s.errors),
      list(s.statuses) + (problems ? ` ${problems}` : ''),
    ];
  });
}

function verdict(h: Headline): string {
  if (!h.budget) return '';
  const { op, value } = h.budget;
  const pass = op === '<' ? h.value < value : op === '<=' ? h.value <= value : op === '>' ? h.value > value : h.value >= value;
  return `${pass ? 'PASS' : 'FAIL'} (budget ${op} ${value})`;
}

/** The human-readable report. */
export function formatReport(r: RunReport): string {
  const out: string[] = [];
  const steps = r.scenarios.flatMap((s) => (s.result?.steps ? stepRows(s.name, s.result.steps) : []));
  if (steps.length) {
    out.push('Latency steps (ms, measured from each request\'s scheduled time; "lag" = generator send lag p99; "cpu/req" = CPU ms of the system\'s process per request)');
    out.push(table([['scenario', 'target', 'rate/s', 'done/s', 'sent', 'p50', 'p90', 'p99', 'p99.9', 'max', 'lag', 'cpu/req', 'errors', 'responses'], ...steps]));
    out.push('');
  }
  out.push('Summary');
  const rows: string[][] = [['scenario', 'figure', 'value', 'unit', 'verdict']];
  for (const s of r.scenarios) {
    if (s.skipped) rows.push([s.name, `skipped: ${s.skipped}`, '', '', '']);
    else if (s.error) rows.push([s.name, `FAILED: ${s.error}`, '', '', '']);
    for (const h of s.result?.headlines ?? []) rows.push([s.name, h.label, String(h.value), h.unit, verdict(h)]);
    if (s.stray_errors?.length) rows.push([s.name, `warning: ${s.stray_errors.length} unawaited error(s) surfaced meanwhile, e.g. ${s.stray_errors[0]}`, '', '', '']);
  }
  out.push(table(rows));
  return out.join('\n');
}

/** Writes the JSON report into `dir` and returns its path. */
export async function writeReport(dir: string, r: RunReport): Promise<string> {
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `${r.started_at.replace(/[:.]/g, '-')}.json`);
  await writeFile(file, `${JSON.stringify(r, null, 2)}\n`);
  return file;
}
