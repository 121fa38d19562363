/**
 * The deployment files, checked without helm or docker (neither runs here): the chart's
 * values against its JSON schema, the templates' block structure and every `.Values` path
 * they read, and that the Helm chart, the compose file and the Dockerfile all know every
 * service in services/. A new service without deployment entries fails here.
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { Ajv } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { loadConfig } from '@zc/shared/config';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CHART = path.join(ROOT, 'k8s/helm/zc');
const read = (p: string) => readFileSync(path.join(ROOT, p), 'utf8');

type Json = Record<string, unknown>;
const values = parseYaml(read('k8s/helm/zc/values.yaml')) as Json;
const schema = JSON.parse(read('k8s/helm/zc/values.schema.json')) as Json;

/** Every service the repository has (a folder with a main entry point). */
const SERVICES = readdirSync(path.join(ROOT, 'services')).filter((d) => existsSync(path.join(ROOT, 'services', d, 'src/main.ts')));

const clone = <T>(v: T): T => structuredClone(v);

function lookup(obj: unknown, dotted: string): unknown {
  let cur: unknown = obj;
  for (const key of dotted.split('.').filter(Boolean)) {
    if (!cur || typeof cur !== 'object' || !Object.hasOwn(cur, key)) return undefined;
    cur = (cur as Json)[key];
  }
  return cur;
}

function setPath(obj: Json, dotted: string, value: unknown): Json {
  const keys = dotted.split('.');
  let cur = obj;
  for (const k of keys.slice(0, -1)) cur = (cur[k] ??= {}) as Json;
  cur[keys[keys.length - 1] as string] = value;
  return obj;
}

t.test('Chart.yaml', async (t) => {
  const chart = parseYaml(read('k8s/helm/zc/Chart.yaml')) as Json;
  t.match(chart, { apiVersion: 'v2', name: 'zc', type: 'application', version: /^\d+\.\d+\.\d+$/, appVersion: /^\d+\.\d+\.\d+$/ });
});

t.test('values.yaml against values.schema.json', async (t) => {
  const ajv = new Ajv({ allErrors: true, strict: false });
  const validate = ajv.compile(schema);
  t.ok(validate(values), `the shipped values are valid: ${ajv.errorsText(validate.errors)}`);

  const withExistingSecret = setPath(clone(values), 'credentials.existingSecret', 'zc-credentials');
  t.ok(validate(withExistingSecret), 'with an existing Secret');
  const scaled = setPath(setPath(clone(values), 'services.messages.autoscaling', { enabled: true, minReplicas: 2, maxReplicas: 10 }), 'services.events.replicas', 4);
  t.ok(validate(scaled), `autoscaling one service, more replicas of another: ${ajv.errorsText(validate.errors)}`);

  const bad: Array<[string, unknown]> = [
    ['imagee', { repository: 'x' }],
    ['image.repository', ''],
    ['services.gateway.replicas', -1],
    ['services.gateway.replicas', '2'],
    ['services.gateway.replica', 2],
    ['services.chat', { enabled: true }],
    ['services.users.env', { ZC_RATE_LIMIT_PER_MINUTE: 200 }],
    ['services.users.env', { 'BAD-NAME': '1' }],
    ['services.users.resources', { requests: { cpu: 'lots' } }],
    ['credentials.create.secretKey', 'not-hex'],
    ['credentials.create.databaseUrl', 'mysql://x'],
    ['credentials.existingSecret', 5],
    ['config.subjectPrefix', 'zc.prod'],
    ['config.externalScheme', 'ftp'],
    ['podSecurityContext.runAsNonRoot', false],
    ['securityContext.allowPrivilegeEscalation', true],
    ['securityContext.privileged', true],
    ['metrics.serviceMonitor.interval', 'often'],
    ['serviceDefaults.autoscaling.targetCPUUtilizationPercentage', 150],
  ];
  for (const [where, value] of bad) {
    const v = setPath(clone(values), where, value);
    t.notOk(validate(v), `refuses ${where} = ${JSON.stringify(value)}`);
  }
});

t.test('secure and operable defaults', async (t) => {
  t.match(values.podSecurityContext, { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } });
  t.match(values.securityContext, { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
  t.equal(lookup(values, 'credentials.existingSecret'), '', 'no credentials in values');
  t.same(Object.values(lookup(values, 'credentials.create') as Json), ['', '', '', ''], 'nothing secret shipped');
  t.equal(lookup(values, 'serviceDefaults.autoscaling.enabled'), false, 'HPA off by default');
  t.ok((lookup(values, 'serviceDefaults.replicas') as number) >= 2, 'two replicas by default, so a PDB and rolling updates keep service');
  t.ok(lookup(values, 'serviceDefaults.resources.requests.cpu') && lookup(values, 'serviceDefaults.resources.limits.memory'), 'requests and limits');
  const grace = lookup(values, 'serviceDefaults.terminationGracePeriodSeconds') as number;
  const sleep = lookup(values, 'serviceDefaults.preStopSleepSeconds') as number;
  // runMain (shared/service) forces an exit 25 s after SIGTERM; the pod must outlive both.
  t.ok(grace > sleep + 25, `grace ${grace}s > preStop ${sleep}s + 25 s drain`);
  t.equal(lookup(values, 'metrics.serviceMonitor.enabled'), false, 'ServiceMonitor needs CRDs: opt-in');
});

t.test('every service has chart values, a schema entry, a compose service and a Dockerfile line', async (t) => {
  t.ok(SERVICES.length >= 6, `services found: ${SERVICES.join(', ')}`);
  const required = lookup(schema, 'properties.services.required') as string[];
  const compose = parseYaml(read('deploy/docker-compose.yml')) as { services: Record<string, Json> };
  const dockerfile = read('deploy/Dockerfile');
  for (const s of SERVICES) {
    t.ok(lookup(values, `services.${s}`), `values.services.${s}`);
    t.ok(required.includes(s), `schema requires services.${s}`);
    t.same(compose.services[s]?.command, [`services/${s}/dist/main.js`], `compose runs ${s}`);
    t.ok(dockerfile.includes(`COPY services/${s}/package.json services/${s}/`), `Dockerfile installs ${s}'s dependencies`);
    t.match(dockerfile, new RegExp(`tsc -b .*services/${s}\\b`), `Dockerfile builds ${s}`);
  }
  t.same(Object.keys(lookup(values, 'services') as Json).sort(), [...SERVICES].sort(), 'and no values for services that do not exist');
});

t.test('docker-compose.yml', async (t) => {
  const compose = parseYaml(read('deploy/docker-compose.yml'), { merge: true }) as { services: Record<string, Json> };
  const s = compose.services;
  t.match(s.postgres, { image: /^postgres:/ });
  t.match(s.redis, { image: /^redis:/ });
  const nats = s.nats as { command: string[]; ports: string[]; healthcheck: { test: string[] } };
  t.ok(nats.command.includes('--jetstream'), 'NATS with JetStream');
  t.ok(nats.command.join(' ').includes('--http_port 8222'), 'and its monitoring port');
  t.ok(nats.ports.some((p) => p.endsWith(':8222')), 'published');
  t.match(nats.healthcheck.test.join(' '), /healthz\?js-enabled-only=true/);
  t.ok(nats.command.join(' ').includes('-c /etc/nats/zc.conf'), 'NATS reads deploy/nats.conf');
  t.match(read('deploy/nats.conf'), /^ping_interval: "5s"\nping_max: 2$/m, 'which cuts off a silent client within about 10 s');
  for (const [name, svc] of Object.entries(s)) {
    for (const p of (svc.ports as string[] | undefined) ?? []) t.match(p, /^127\.0\.0\.1:/, `${name} publishes on loopback only`);
  }
  for (const name of SERVICES) {
    const svc = s[name] as Json;
    t.match(svc, { profiles: ['app'], read_only: true, cap_drop: ['ALL'] }, `${name}: app profile, read-only, no capabilities`);
    t.match(svc.depends_on, { migrate: { condition: 'service_completed_successfully' } }, `${name} waits for migrations`);
  }
  t.same(s.migrate?.command, ['deploy/migrate.mjs']);

  // `docker compose up -d` then `npm start` (README's laptop route): the services' default
  // database URL must name the role and database the container creates, and log in to it.
  const saved = process.env.ZC_DATABASE_URL;
  delete process.env.ZC_DATABASE_URL;
  const defaultUrl = new URL(loadConfig().databaseUrl);
  if (saved !== undefined) process.env.ZC_DATABASE_URL = saved;
  const pgEnv = s.postgres?.environment as Record<string, string>;
  t.equal(pgEnv.POSTGRES_USER ?? 'postgres', defaultUrl.username, 'the container creates the default role');
  t.equal(pgEnv.POSTGRES_DB ?? pgEnv.POSTGRES_USER, defaultUrl.pathname.slice(1), 'and the default database');
  t.ok(pgEnv.POSTGRES_HOST_AUTH_METHOD === 'trust' || pgEnv.POSTGRES_PASSWORD === decodeURIComponent(defaultUrl.password), 'and the default URL can log in');
  const appUrl = new URL((s.gateway?.environment as Record<string, string>).ZC_DATABASE_URL);
  t.same([appUrl.username, appUrl.pathname], [defaultUrl.username, defaultUrl.pathname], 'the app profile uses the same role and database');
  t.ok(existsSync(path.join(ROOT, 'deploy/migrate.mjs')));
});

t.test('Dockerfile: multi-stage, runs as a numeric non-root user', async (t) => {
  const lines = read('deploy/Dockerfile').split('\n').map((l) => l.trim());
  const stages = lines.filter((l) => /^FROM\s/i.test(l));
  t.ok(stages.length >= 2, `${stages.length} stages`);
  const lastStage = lines.slice(lines.lastIndexOf(stages[stages.length - 1] as string));
  const users = lastStage.filter((l) => /^USER\s/i.test(l));
  const finalUser = users[users.length - 1]?.split(/\s+/)[1] ?? '';
  t.match(finalUser, /^[1-9]\d*(:\d+)?$/, `final USER ${finalUser} is numeric and not root (runAsNonRoot can verify it)`);
  t.notOk(lastStage.some((l) => /^RUN .*npm (ci|install)(?!.*--omit=dev)/.test(l)), 'no dev dependencies installed in the runtime stage');
  t.match(lines.join('\n'), /ENTRYPOINT \["node"/);
});

t.test('Dockerfile: the OpenTelemetry preload runs before every entry point', async (t) => {
  const text = read('deploy/Dockerfile');
  const entry = /^ENTRYPOINT (\[.*\])$/m.exec(text)?.[1];
  const argv = JSON.parse(entry ?? '[]') as string[];
  const preload = argv[argv.indexOf('--import') + 1] ?? '';
  t.ok(argv.includes('--import'), `the entrypoint preloads with --import (${entry})`);
  t.equal(preload, '/app/shared/dist/instrumentation/index.js');
  t.ok(existsSync(path.join(ROOT, 'shared/src/instrumentation/index.ts')), 'the preload exists');
  t.match(text, /COPY --from=build \S+ \/src\/shared\/dist shared\/dist/, 'and is copied into the runtime image');
});

t.test('production dependencies carry the OTLP/HTTP trace exporter only (no Node SDK, no gRPC, Zipkin, metric or log exporters)', async (t) => {
  const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { dev?: boolean; devOptional?: boolean }> };
  const prod = Object.entries(lock.packages)
    .filter(([k, v]) => k.startsWith('node_modules/') && !v.dev && !v.devOptional)
    .map(([k]) => k.slice(k.lastIndexOf('node_modules/') + 'node_modules/'.length));
  const heavy = prod.filter((n) => /^@opentelemetry\/(sdk-node|exporter-(?!trace-otlp-http$)|otlp-grpc)|^@grpc\//.test(n));
  t.ok(prod.includes('@opentelemetry/exporter-trace-otlp-http'), 'the OTLP/HTTP trace exporter is a production dependency');
  t.same([...new Set(heavy)].sort(), [], 'nothing heavier is');
});

/** TypeScript sources of the packages the image runs (not tests). */
function runtimeSources(dir = ''): string[] {
  const abs = path.join(ROOT, dir);
  return readdirSync(abs, { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) return ['node_modules', 'dist', 'test', '.git', 'k8s', 'deploy', 'scripts', 'docs'].includes(e.name) ? [] : runtimeSources(rel);
    return /\/src\/.*\.ts$/.test(rel) && !rel.endsWith('.d.ts') ? [rel] : [];
  });
}

t.test('Dockerfile: every file the code reads beside itself is in the runtime image', async (t) => {
  const lines = read('deploy/Dockerfile').split('\n').map((l) => l.trim());
  const runtime = lines.slice(lines.findLastIndex((l) => /^FROM\s/i.test(l)));
  // Destinations (relative to WORKDIR /app) the runtime stage copies into.
  const copied = runtime
    .filter((l) => /^COPY\s/i.test(l))
    .map((l) => l.split(/\s+/).filter((w) => !w.startsWith('--')).pop() as string)
    .map((dest) => path.posix.normalize(dest.replace(/^\/app\/?/, '')).replace(/\/$/, ''));
  const ignored = read('deploy/Dockerfile.dockerignore').split('\n').filter((l) => l && !l.startsWith('#'));
  const needed = new Set<string>();
  for (const file of runtimeSources()) {
    for (const m of read(file).matchAll(/new URL\('(\.\.?\/[^']+)', import\.meta\.url\)/g)) {
      // src/x/y.ts runs as dist/x/y.js: the same relative path, resolved from there.
      needed.add(path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1] as string)));
    }
  }
  t.ok(needed.size >= 2, `files read beside the code: ${[...needed].join(', ')}`);
  for (const f of needed) {
    t.ok(copied.some((dest) => dest === '.' ? false : f === dest || f.startsWith(`${dest}/`)), `${f} is copied into the runtime stage`);
    t.notOk(ignored.some((pat) => f.startsWith(pat.replace(/^\*\*\//, '').replace(/\/$/, '') + '/')), `${f} is not excluded from the build context`);
  }
});

/** The template files' source, comments removed. */
function templates(): Array<{ file: string; text: string }> {
  const dir = path.join(CHART, 'templates');
  return readdirSync(dir)
    .filter((f) => /\.(yaml|tpl|txt)$/.test(f))
    .map((f) => ({ file: f, text: readFileSync(path.join(dir, f), 'utf8').replace(/\{\{-?\s*\/\*[\s\S]*?\*\/\s*-?\}\}/g, '') }));
}

t.test('templates: balanced actions and blocks', async (t) => {
  for (const { file, text } of templates()) {
    t.equal((text.match(/\{\{/g) ?? []).length, (text.match(/\}\}/g) ?? []).length, `${file}: every {{ has its }}`);
    t.notOk(/\t/.test(text), `${file}: no tabs (YAML)`);
    const stack: string[] = [];
    let ok = true;
    for (const m of text.matchAll(/\{\{-?\s*(if|range|with|define|block|else|end)\b/g)) {
      const word = m[1] as string;
      if (word === 'end') {
        if (!stack.pop()) ok = false;
      } else if (word === 'else') {
        if (!['if', 'with', 'range'].includes(stack[stack.length - 1] ?? '')) ok = false;
      } else stack.push(word);
    }
    t.ok(ok && stack.length === 0, `${file}: if/range/with/define blocks close (${stack.join(',') || 'balanced'})`);
  }
});

t.test('templates: every value path they read exists, every template they include is defined', async (t) => {
  const all = templates();
  const defined = new Set(all.flatMap(({ text }) => [...text.matchAll(/define\s+"([^"]+)"/g)].map((m) => m[1] as string)));
  // $svc / .svc in templates is serviceDefaults merged with one service's entry.
  const perService = { ...(values.serviceDefaults as Json), enabled: true };
  for (const { file, text } of all) {
    for (const m of text.matchAll(/\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)/g)) {
      const p = (m[1] as string).slice(1);
      t.not(lookup(values, p), undefined, `${file}: .Values.${p} exists in values.yaml`);
    }
    for (const m of text.matchAll(/(?:\$svc|\.svc)((?:\.[A-Za-z_][A-Za-z0-9_]*)+)/g)) {
      const p = (m[1] as string).slice(1);
      t.not(lookup(perService, p), undefined, `${file}: service setting ${p} has a default`);
    }
    for (const m of text.matchAll(/include\s+"([^"]+)"/g)) t.ok(defined.has(m[1] as string), `${file}: ${m[1]} is defined`);
  }
});

t.test('templates: the operational features are there', async (t) => {
  const text = Object.fromEntries(templates().map(({ file, text }) => [file, text]));
  const dep = text['deployments.yaml'] ?? '';
  for (const needle of ['startupProbe:', 'livenessProbe:', 'readinessProbe:', 'path: /livez', 'path: /readyz', 'preStop:', 'terminationGracePeriodSeconds:', 'automountServiceAccountToken: false', 'toYaml $.Values.securityContext', 'toYaml $.Values.podSecurityContext']) {
    t.ok(dep.includes(needle), `deployments: ${needle}`);
  }
  t.match(dep, /kind: Deployment/);
  t.match(text['poddisruptionbudgets.yaml'], /kind: PodDisruptionBudget/);
  t.match(text['autoscaling.yaml'], /kind: HorizontalPodAutoscaler/);
  t.match(text['servicemonitor.yaml'], /kind: ServiceMonitor/);
  t.match(text['services.yaml'], /kind: Service/);
  t.match(text['migration-job.yaml'], /helm\.sh\/hook: post-install,pre-upgrade/);
  t.match(text['migration-job.yaml'], /deploy\/migrate\.mjs/);
  t.notMatch(text['credentials-secret.yaml'], /helm\.sh\/hook/, 'the credentials Secret is a release object');
  t.match(text['_helpers.tpl'], /secretKeyRef/, 'credentials come from the Secret, never plain env');
});
