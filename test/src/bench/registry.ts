/**
 * Every scenario the runner knows. Scenario files written by other teams are loaded only if
 * they have been built, so a checkout without them still benchmarks what it has.
 */
import type { Scenario, ScenarioResult } from './scenario.js';
import { scenarios as userScenarios } from './scenarios-users.js';

/** Scenario modules beside this one that may or may not exist yet; each exports `scenarios`. */
const OPTIONAL_MODULES = [
  './scenarios-messages.js',
  './scenarios-events.js',
  './scenarios-fanout.js',
  './scenarios-reactions-topics.js',
  './scenarios-register.js',
  './scenarios-presence.js',
  './scenarios-user-groups.js',
  './scenarios-uploads.js',
];

/** The markdown package's renderer benchmark (markdown/src/bench.ts), outside this package. */
const MARKDOWN_BENCH = '../../../markdown/dist/bench.js';

export interface LoadedScenarios {
  scenarios: Scenario[];
  /** Modules that exist but failed to load, with the reason (shown in the report). */
  broken: Array<{ module: string; error: string }>;
}

function isMissing(err: unknown, url: string): boolean {
  const e = err as { code?: string; message?: string };
  return e.code === 'ERR_MODULE_NOT_FOUND' && (e.message ?? '').includes(new URL(url).pathname);
}

async function importIfPresent(specifier: string): Promise<Record<string, unknown> | undefined> {
  const url = new URL(specifier, import.meta.url).href;
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (err) {
    if (isMissing(err, url)) return undefined;
    throw err;
  }
}

/** A unit guessed from a field's name (`ops_per_sec`, `mean_us`, `p99_ms`, `rss_bytes`). */
function unitOf(key: string): string {
  if (/per_s(ec)?$/.test(key)) return '/s';
  if (/(_|^)us$/.test(key)) return 'µs';
  if (/(_|^)ms$/.test(key)) return 'ms';
  if (/bytes$/.test(key)) return 'B';
  return '';
}

/**
 * Numbers in whatever benchRender() returns become summary lines; a list of named results
 * (`[{name, ops_per_sec, mean_us}]`) gives `<name> <field>` lines. The rest is kept as detail.
 */
function headlinesOf(value: unknown, prefix = ''): ScenarioResult['headlines'] {
  if (Array.isArray(value)) {
    return value.flatMap((v, i) => {
      const name = v && typeof v === 'object' && typeof (v as { name?: unknown }).name === 'string' ? (v as { name: string }).name : String(i);
      return headlinesOf(v, `${prefix}${name} `);
    });
  }
  if (!value || typeof value !== 'object') return [];
  return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => {
    if (typeof v === 'number') return [{ label: `${prefix}${k}`, value: v, unit: unitOf(k) }];
    if (v && typeof v === 'object') return headlinesOf(v, `${prefix}${k}.`);
    return [];
  });
}

function markdownScenario(benchRender: (...args: unknown[]) => unknown): Scenario {
  return {
    name: 'markdown-render',
    description: 'the markdown renderer on its own (markdown/src/bench.ts benchRender())',
    default: true,
    async run() {
      const result = await benchRender();
      return { headlines: headlinesOf(result), details: { result } };
    },
  };
}

export async function loadScenarios(): Promise<LoadedScenarios> {
  const scenarios: Scenario[] = [...userScenarios];
  const broken: LoadedScenarios['broken'] = [];
  for (const specifier of OPTIONAL_MODULES) {
    try {
      const mod = await importIfPresent(specifier);
      if (!mod) continue;
      if (!Array.isArray(mod.scenarios)) throw new Error('does not export `scenarios: Scenario[]`');
      scenarios.push(...(mod.scenarios as Scenario[]));
    } catch (err) {
      broken.push({ module: specifier, error: String((err as Error).message ?? err) });
    }
  }
  try {
    const mod = await importIfPresent(MARKDOWN_BENCH);
    if (mod && Array.isArray(mod.scenarios)) scenarios.push(...(mod.scenarios as Scenario[]));
    else if (mod && typeof mod.benchRender === 'function') scenarios.push(markdownScenario(mod.benchRender as (...args: unknown[]) => unknown));
  } catch (err) {
    broken.push({ module: 'markdown/dist/bench.js', error: String((err as Error).message ?? err) });
  }
  const seen = new Set<string>();
  for (const s of scenarios) {
    if (seen.has(s.name)) throw new Error(`two scenarios are named ${s.name}`);
    seen.add(s.name);
  }
  return { scenarios, broken };
}
