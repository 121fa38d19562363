/**
 * What a benchmark scenario is. The runner (run.ts) gives every scenario the same system
 * (started by the runner, or an already running gateway) and collects what it returns into
 * one report. A scenario file exports `scenarios: Scenario[]`; README.md says how to add one.
 */
import type { ApiClient } from '../client.js';
import type { LoadTarget, Ramp, StepOptions, StepResult } from './load.js';

/** An account the scenario may act as. */
export interface BenchAccount {
  user_id: number;
  email: string;
  api_key: string;
  full_name: string;
}

/** The realm's named people; in external mode only the ones the operator passed in are present. */
export type BenchPeople = Partial<Record<'iago' | 'desdemona' | 'hamlet' | 'othello' | 'polonius' | 'bot', BenchAccount>>;

/** The system under test, as scenarios see it. */
export interface BenchSystem {
  /** `inprocess`: started by the runner for this run (its own database and prefixes); `external`: ZC_BENCH_BASE_URL. */
  mode: 'inprocess' | 'external';
  /** Base URL of the first gateway replica (no `/api/v1`). */
  baseUrl: string;
  /** Base URLs of every gateway replica; load is spread over them. */
  gatewayUrls: string[];
  people: BenchPeople;
  /** An account that can create users (iago in the runner's realm; the operator's account otherwise). */
  admin: BenchAccount;
  /** A test-style HTTP client acting as `a`, for setup steps (not for timed load). */
  client(a: BenchAccount): ApiClient;
  /**
   * Creates an account through POST /users as `admin` and returns its credentials
   * (fetch_api_key), so it works in both modes.
   */
  createUser(a: { email: string; full_name: string; password?: string }): Promise<BenchAccount>;
  /**
   * Connection settings of the runner's own system (database URL, NATS and Redis with their
   * prefixes), for seeding in bulk; undefined in external mode.
   */
  infra?: {
    databaseUrl: string;
    natsUrl: string;
    redisUrl: string;
    subjectPrefix: string;
    redisPrefix: string;
    /** The system's ZC_SECRET_KEY (API keys of accounts seeded through SQL) and root domain (realm hosts). */
    secretKey: string;
    rootDomain: string;
  };
}

/** Options every scenario receives; a scenario may ignore those that do not fit it. */
export interface BenchOptions {
  /** Seconds each rate step lasts. */
  stepSeconds: number;
  /** Request rates (per second) to step through, lowest first. */
  rates: number[];
  /** A step counts as held when its p99 stays under this many milliseconds and nothing failed. */
  p99BudgetMs: number;
  /** Extra `key=value` options from the command line (`--opt key=value`), for scenario-specific knobs. */
  extra: Record<string, string>;
}

export interface BenchContext<S = unknown> {
  sys: BenchSystem;
  options: BenchOptions;
  /** What setup() returned. */
  state: S;
  /** Progress line on stderr (the report itself goes to stdout). */
  log(line: string): void;
  /**
   * Steps `target` through `options.rates` (open model: requests go out on schedule whatever
   * is outstanding) and stops after the first step that misses the budget.
   */
  rampUp(target: LoadTarget, opts?: Partial<Pick<BenchOptions, 'rates' | 'stepSeconds' | 'p99BudgetMs'>>): Promise<RampResult>;
  /** One fixed-rate step of `target` over the run's connection pools (for scenarios that do not ramp). */
  runStep(target: LoadTarget, opts: StepOptions): Promise<StepResult>;
  /** CPU seconds the system under test has used so far (every service process), where readable. */
  cpuSeconds?: () => number | undefined;
  /** The same per service (replicas summed), where readable (processes layout). */
  cpuSecondsByService?: () => Record<string, number>;
  /** The first gateway's Prometheus metrics as text, where readable (processes layout). */
  gatewayMetrics?: () => Promise<string>;
}

/** The outcome of rampUp: every step run, the highest rate held and why stepping stopped. */
export type RampResult = Ramp;

/** A figure worth a line in the summary table, e.g. `{ label: 'max rate held', value: 2000, unit: 'req/s' }`. */
export interface Headline {
  label: string;
  value: number;
  unit: string;
  /** Optional budget from DESIGN.md; the report marks the figure pass/fail against it. */
  budget?: { op: '<' | '<=' | '>' | '>='; value: number };
}

export interface ScenarioResult {
  headlines: Headline[];
  /** Latency steps, if the scenario ran any (printed as a table, kept in the JSON). */
  steps?: StepResult[];
  /** Anything else worth keeping in the JSON file. */
  details?: Record<string, unknown>;
}

export interface Scenario<S = unknown> {
  /** Short kebab-case name, used on the command line (`npm run bench -- users-me`). */
  name: string;
  /** One line for `--list` and the report. */
  description: string;
  /** Whether a default run (no names given) includes it; heavy scenarios may opt out. */
  default?: boolean;
  /** Set when the scenario cannot run against an external gateway (e.g. it seeds through SQL). */
  needsInProcess?: boolean;
  /** Prepares data once, before run(); its result is `ctx.state`. */
  setup?(sys: BenchSystem, options: BenchOptions): Promise<S>;
  run(ctx: BenchContext<S>): Promise<ScenarioResult>;
  /** Undoes what setup did, when that matters against an external system. */
  teardown?(sys: BenchSystem, state: S): Promise<void>;
}

/** Helps a scenario file declare its list with the right state types. */
export function defineScenario<S>(s: Scenario<S>): Scenario<unknown> {
  return s as Scenario<unknown>;
}
