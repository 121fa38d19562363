/**
 * The Helm chart rendered, as `helm template` would (k8s/render: Go's text/template with the
 * sprig library, from Debian's packages), and every object checked the way a cluster and the
 * usual GitOps tools would: against Kubernetes' own schemas (kubernetes-models), YAML without
 * repeated keys, names within the API's limits, selectors that select, Secrets that exist,
 * and `kubectl kustomize` post-rendering.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parseAllDocuments, stringify } from 'yaml';
import { SERVICE_NODE_FLAGS, SERVICE_NODE_OPTIONS } from '@zc/shared/config';

t.setTimeout(180_000); // the first run builds the renderer (about 25 s)

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CHART = path.join(ROOT, 'k8s/helm/zc');
const RENDERER_SRC = path.join(ROOT, 'k8s/render');

type Json = Record<string, unknown>;
interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Json;
  [k: string]: unknown;
}

/** Builds the renderer once per source version (Go's build cache makes a rebuild cheap). */
function renderer(): string {
  const src = readFileSync(path.join(RENDERER_SRC, 'main.go'));
  const bin = path.join(os.tmpdir(), `zc-helm-render-${createHash('sha256').update(src).digest('hex').slice(0, 12)}`);
  if (existsSync(bin)) return bin;
  const go = spawnSync('go', ['build', '-o', bin, '.'], {
    cwd: RENDERER_SRC,
    encoding: 'utf8',
    env: { ...process.env, GO111MODULE: 'off', GOPATH: '/usr/share/gocode', GOFLAGS: '' },
  });
  if (go.error || go.status !== 0) {
    throw new Error(
      `cannot build k8s/render (needs Debian's golang-go, golang-github-masterminds-sprig-dev and golang-gopkg-yaml.v3-dev; .ci/run installs them): ${go.error?.message ?? go.stderr}`,
    );
  }
  return bin;
}

const tmp = mkdtempSync(path.join(os.tmpdir(), 'zc-chart-'));

/** Renders the chart with these values on top of values.yaml; returns the YAML text. */
function renderText(values: Json, release = 'chat'): { text: string; error: string } {
  const file = path.join(tmp, `values-${createHash('sha1').update(JSON.stringify([values, release])).digest('hex')}.yaml`);
  writeFileSync(file, stringify(values));
  const r = spawnSync(renderer(), ['-f', file, '--name', release, '--namespace', 'chat', CHART], { encoding: 'utf8' });
  return { text: r.status === 0 ? r.stdout : '', error: r.status === 0 ? '' : r.stderr };
}

function render(values: Json, release?: string): K8sObject[] {
  const { text, error } = renderText(values, release);
  if (error) throw new Error(error);
  const docs = parseAllDocuments(text, { uniqueKeys: true });
  const objects: K8sObject[] = [];
  for (const doc of Array.isArray(docs) ? docs : [docs]) {
    // A repeated key (e.g. a pod label twice) is an error here, as in kustomize, Flux and Argo CD.
    if (doc.errors.length) throw new Error(`invalid YAML: ${doc.errors.map((e) => e.message).join('; ')}`);
    const obj = doc.toJS() as K8sObject | null;
    if (obj) objects.push(obj);
  }
  return objects;
}

/** The Kubernetes model class of an object, from kubernetes-models (built from the API's OpenAPI schemas). */
async function modelOf(obj: K8sObject): Promise<(new (data: unknown) => { validate(): void }) | undefined> {
  const [group, version] = obj.apiVersion.includes('/') ? obj.apiVersion.split('/') : ['', obj.apiVersion];
  const module =
    group === 'monitoring.coreos.com'
      ? `@kubernetes-models/prometheus-operator/${group}/${version}/${obj.kind}`
      : `kubernetes-models/${group ? `${group}/` : ''}${version}/${obj.kind}`;
  try {
    const m = (await import(module)) as Record<string, unknown>;
    return m[obj.kind] as new (data: unknown) => { validate(): void };
  } catch {
    return undefined;
  }
}

const EXISTING_SECRET = { credentials: { existingSecret: 'zc-credentials' } };
const HEX64 = 'ab'.repeat(32);
/** Every optional part switched on, a release name as long as helm allows (53). */
const EVERYTHING: Json = {
  credentials: {
    existingSecrets: { natsUrl: 'nats-operator-secret' },
    create: { databaseUrl: 'postgres://zc:pw@pg:5432/zc', redisUrl: 'redis://redis:6379', secretKey: HEX64 },
  },
  ingress: { enabled: true, className: 'nginx', annotations: { 'cert-manager.io/cluster-issuer': 'dns01' } },
  networkPolicy: {
    enabled: true,
    gatewayFrom: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } }],
    extraEgress: [{ ports: [{ port: 4318, protocol: 'TCP' }] }],
  },
  metrics: {
    serviceMonitor: { enabled: true },
    podMonitor: { enabled: true, labels: { release: 'prom' } },
    prometheusRule: { enabled: true, labels: { release: 'prom' }, additionalRules: [{ alert: 'Extra', expr: 'vector(1) > 2' }] },
    grafanaDashboards: { enabled: true },
  },
  podLabels: { team: 'chat' },
  services: { messages: { autoscaling: { enabled: true, minReplicas: 2, maxReplicas: 8 }, podLabels: { tier: 'backend' } } },
  extraObjects: [
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: '{{ .Release.Name }}-extra' }, data: { a: 'b' } },
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-extra-text\ndata:\n  root: {{ .Values.config.rootDomain | quote }}\n',
  ],
};
const LONG_RELEASE = 'a-release-name-as-long-as-helm-allows-it-abcdefghijk'.padEnd(53, 'x');

const SETS: Array<[string, Json, string?]> = [
  ['defaults with an existing Secret', EXISTING_SECRET],
  ['everything on, a long release name', EVERYTHING, LONG_RELEASE],
  ['S3 uploads, no migrations Job', { ...EXISTING_SECRET, uploads: { backend: 's3', s3: { bucket: 'zc', credentialsSecret: 's3' } }, migrations: { enabled: false } }],
];

const DNS_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const podTemplate = (o: K8sObject) => (o.spec?.template as { metadata: { labels: Record<string, string> }; spec: Json } | undefined);
const containersOf = (o: K8sObject) => ((podTemplate(o)?.spec.containers ?? []) as Array<{ name: string; env?: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string } } }> }>);
const matches = (selector: Record<string, string>, labels: Record<string, string> | undefined) =>
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);

for (const [title, values, release] of SETS) {
  t.test(`rendered: ${title}`, async (t) => {
    const objects = render(values, release);
    t.ok(objects.length > 10, `${objects.length} objects`);
    const byKind = (kind: string) => objects.filter((o) => o.kind === kind);

    for (const o of objects) {
      const Model = await modelOf(o);
      if (!Model) {
        t.fail(`${o.apiVersion} ${o.kind}: no Kubernetes schema known`);
        continue;
      }
      try {
        new Model(o).validate();
        t.pass(`${o.kind} ${o.metadata.name} matches the ${o.apiVersion} schema`);
      } catch (e) {
        t.fail(`${o.kind} ${o.metadata.name}: ${(e as Error).message}`);
      }
      t.ok(o.metadata.name.length <= 253 && DNS_SUBDOMAIN.test(o.metadata.name), `${o.kind} name ${o.metadata.name} is a DNS subdomain`);
      for (const [k, v] of Object.entries({ ...o.metadata.labels, ...podTemplate(o)?.metadata.labels })) {
        t.ok(typeof v === 'string' && v.length <= 63, `${o.kind} ${o.metadata.name}: label ${k} value fits 63 characters`);
      }
    }
    for (const s of byKind('Service')) t.ok(s.metadata.name.length <= 63 && DNS_LABEL.test(s.metadata.name), `Service ${s.metadata.name} (${s.metadata.name.length}) is a DNS label`);
    t.equal(new Set(objects.map((o) => `${o.kind}/${o.metadata.name}`)).size, objects.length, 'no two objects share kind and name');

    // Selectors select: each Deployment its own pods, each Service and PDB some Deployment's pods.
    const pods = byKind('Deployment').map((d) => podTemplate(d)?.metadata.labels ?? {});
    for (const d of byKind('Deployment')) {
      t.ok(matches((d.spec?.selector as { matchLabels: Record<string, string> }).matchLabels, podTemplate(d)?.metadata.labels), `${d.metadata.name} selects its pods`);
    }
    for (const s of byKind('Service')) t.ok(pods.some((l) => matches(s.spec?.selector as Record<string, string>, l)), `Service ${s.metadata.name} selects pods`);
    for (const p of byKind('PodDisruptionBudget')) t.ok(pods.some((l) => matches((p.spec?.selector as { matchLabels: Record<string, string> }).matchLabels, l)), `PDB ${p.metadata.name} selects pods`);

    // Every Secret a pod reads is rendered here or named in values as existing.
    const rendered = new Set(byKind('Secret').map((s) => s.metadata.name));
    const existing = new Set(JSON.stringify(values).match(/"(zc-credentials|nats-operator-secret|s3)"/g)?.map((s) => s.slice(1, -1)));
    for (const w of [...byKind('Deployment'), ...byKind('Job')]) {
      for (const c of containersOf(w)) {
        for (const e of c.env ?? []) {
          const ref = e.valueFrom?.secretKeyRef?.name;
          if (ref) t.ok(rendered.has(ref) || existing.has(ref), `${w.metadata.name}: ${e.name} from Secret ${ref}, which exists`);
        }
      }
    }
    for (const s of byKind('Secret')) t.notOk(s.metadata.annotations?.['helm.sh/hook'], `Secret ${s.metadata.name} is a release object, not a hook`);

    // kustomize (and Flux/Argo CD post-rendering) accepts the output and can add labels to it.
    const dir = mkdtempSync(path.join(tmp, 'kustomize-'));
    writeFileSync(path.join(dir, 'chart.yaml'), renderText(values, release).text);
    writeFileSync(path.join(dir, 'kustomization.yaml'), stringify({ resources: ['chart.yaml'], labels: [{ pairs: { 'example.com/owner': 'sre' }, includeTemplates: true }] }));
    const k = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
    if (k.error) t.fail(`kubectl is needed for this check: ${k.error.message}`);
    else t.equal(k.status, 0, `kubectl kustomize accepts the output ${k.stderr.slice(0, 500)}`);
  });
}

t.test('the gateway trusts the Ingress as its one proxy, and nobody without it', async (t) => {
  const trust = (values: Json) => {
    const gw = render(values).find((o) => o.kind === 'Deployment' && o.metadata.name.endsWith('-gateway')) as K8sObject;
    return containersOf(gw)[0]?.env?.find((e) => e.name === 'ZC_TRUST_PROXY')?.value;
  };
  t.equal(trust(EXISTING_SECRET), 'false');
  t.equal(trust({ ...EXISTING_SECRET, ingress: { enabled: true } }), '1');
  t.equal(trust({ ...EXISTING_SECRET, config: { trustProxy: '10.0.0.0/8' } }), '10.0.0.0/8');
});

/** deploy/docker-compose.yml, as much of it as these tests read. */
const composeFile = () =>
  parseAllDocuments(readFileSync(path.join(ROOT, 'deploy/docker-compose.yml'), 'utf8'))[0]?.toJS() as {
    services: Record<string, { environment?: Record<string, string>; entrypoint?: unknown }>;
  };

t.test("each service runs with its own Node options, in the chart and the compose file as npm start gives them", async (t) => {
  const deployments = render(EXISTING_SECRET).filter((o) => o.kind === 'Deployment');
  t.ok(deployments.length >= 7, 'every service rendered');
  for (const d of deployments) {
    const service = d.metadata.name.replace(/^.*-zc-/, '');
    const options = containersOf(d)[0]?.env?.find((e) => e.name === 'NODE_OPTIONS')?.value;
    t.equal(options, SERVICE_NODE_OPTIONS[service], `chart: ${service}`);
  }
  const compose = composeFile();
  for (const [service, options] of Object.entries(SERVICE_NODE_OPTIONS)) t.equal(compose.services[service]?.environment?.NODE_OPTIONS, options, `compose: ${service}`);
});

t.test("every service's process gets the command-line Node flags npm start gives it: the image's entry point has them, and nothing replaces it", async (t) => {
  const entry = /^ENTRYPOINT\s+(\[.*\])\s*$/m.exec(readFileSync(path.join(ROOT, 'deploy/Dockerfile'), 'utf8'))?.[1];
  t.ok(entry, 'the Dockerfile has an exec-form ENTRYPOINT');
  const argv = JSON.parse(entry ?? '[]') as string[];
  t.equal(argv[0], 'node');
  for (const flag of SERVICE_NODE_FLAGS) t.ok(argv.includes(flag), `entry point: ${flag}`);
  const workloads = render(EXISTING_SECRET).filter((o) => o.kind === 'Deployment');
  for (const d of workloads) {
    for (const c of containersOf(d) as Array<{ name: string; command?: unknown }>) t.equal(c.command, undefined, `chart: ${d.metadata.name}/${c.name} keeps the entry point`);
  }
  const compose = composeFile();
  for (const [name, svc] of Object.entries(compose.services)) t.equal(svc.entrypoint, undefined, `compose: ${name} keeps the entry point`);
});

t.test('Ingress: root and wildcard realm hosts, TLS, long-poll timeouts', async (t) => {
  const ing = render({ ...EXISTING_SECRET, ingress: { enabled: true } }).find((o) => o.kind === 'Ingress') as K8sObject;
  const spec = ing.spec as { tls: Array<{ hosts: string[] }>; rules: Array<{ host: string }> };
  t.same(spec.rules.map((r) => r.host), ['chat.example.com', '*.chat.example.com']);
  t.same(spec.tls[0]?.hosts, ['chat.example.com', '*.chat.example.com']);
  t.ok(Number(ing.metadata.annotations?.['nginx.ingress.kubernetes.io/proxy-read-timeout']) > 90, 'read timeout beyond the 90 s long-poll window');
});

t.test('NetworkPolicy: default deny both ways, with the allows the services need', async (t) => {
  const policies = render({ ...EXISTING_SECRET, networkPolicy: { enabled: true } }).filter((o) => o.kind === 'NetworkPolicy');
  const deny = policies.find((p) => p.metadata.name.endsWith('-default-deny'));
  t.same((deny?.spec as Json | undefined)?.policyTypes, ['Ingress', 'Egress']);
  const egress = JSON.stringify(policies.map((p) => p.spec?.egress ?? []));
  for (const port of [53, 5432, 6379, 4222, 9300]) t.match(egress, `"port":${port}`, `egress to port ${port}`);
  const noDeny = render({ ...EXISTING_SECRET, networkPolicy: { enabled: true, defaultDeny: false } }).filter((o) => o.kind === 'NetworkPolicy');
  t.notOk(noDeny.some((p) => (p.spec?.policyTypes as string[]).includes('Egress')), 'defaultDeny: false leaves egress open');
});

t.test('PodMonitor scrapes every pod of the release on the admin port', async (t) => {
  const objects = render(EVERYTHING, LONG_RELEASE);
  const pm = objects.find((o) => o.kind === 'PodMonitor') as K8sObject;
  t.match(pm.spec, { podMetricsEndpoints: [{ port: 'admin', path: '/metrics' }] });
  const selector = (pm.spec?.selector as { matchLabels: Record<string, string> }).matchLabels;
  const deployments = objects.filter((o) => o.kind === 'Deployment');
  t.ok(deployments.length >= 7 && deployments.every((d) => matches(selector, podTemplate(d)?.metadata.labels)), 'selects every service');
  t.notOk(render(EXISTING_SECRET).some((o) => o.kind === 'PodMonitor'), 'off by default');
});

/** Names of the metrics the code registers (prom-client `name: 'zc_…'`), histograms with their series. */
function definedMetrics(): Set<string> {
  const out = new Set<string>();
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (['node_modules', 'dist', 'test'].includes(e.name)) continue;
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.ts')) {
        const text = readFileSync(p, 'utf8');
        // prom-client's `name:` option, the gauge helper, and the HTTP RED metrics' own
        // declarations in shared/src/metrics (`info('zc_…'`, `…Name = 'zc_…'`).
        for (const m of text.matchAll(/(?:name: |gauge\(|info\(|Name = )'(zc_[a-z_]+)'/g)) {
          const n = m[1] as string;
          for (const suffix of ['', '_bucket', '_count', '_sum']) out.add(n + suffix);
        }
      }
    }
  };
  for (const d of ['shared/src', 'services']) walk(path.join(ROOT, d));
  return out;
}

t.test('PrometheusRule alerts and the Grafana dashboard use metrics the services export', async (t) => {
  const objects = render(EVERYTHING, LONG_RELEASE);
  const defined = definedMetrics();
  t.ok(defined.has('zc_bus_requests_total') && defined.has('zc_event_delivery_latency_seconds_bucket'), `${defined.size} metric series known`);

  const rule = objects.find((o) => o.kind === 'PrometheusRule') as K8sObject;
  const rules = ((rule.spec?.groups as Array<{ rules: Array<{ alert: string; expr: string; annotations?: Record<string, string> }> }>)[0]?.rules ?? []);
  const alerts = rules.map((r) => r.alert);
  for (const a of ['ZcHttpErrorRatioHigh', 'ZcOutboxLagHigh', 'ZcJetStreamConsumerLagging', 'ZcEventsLeaderMissing', 'ZcEventDeliverySlow', 'ZcEventsDeadLettered', 'Extra']) t.ok(alerts.includes(a), `alert ${a}`);
  for (const r of rules.filter((r) => r.alert !== 'Extra')) {
    const used = [...r.expr.matchAll(/\b(zc_[a-z_]+)/g)].map((m) => m[1] as string);
    t.ok(used.length > 0 && used.every((n) => defined.has(n)), `${r.alert}: ${used.join(', ')} exported`);
    t.match(r.expr, /namespace="chat"/, `${r.alert}: scoped to the release's namespace`);
    t.match(r.annotations?.summary ?? '', /\S/, `${r.alert} has a summary`);
  }
  t.notOk(render(EXISTING_SECRET).some((o) => o.kind === 'PrometheusRule' || o.metadata.name.endsWith('-dashboards')), 'both off by default');

  const cm = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.endsWith('-dashboards')) as K8sObject & { data: Record<string, string> };
  t.equal(cm.metadata.labels?.grafana_dashboard, '1', 'labelled for the Grafana sidecar');
  const dash = JSON.parse(cm.data['zc-overview.json'] ?? '{}') as { uid: string; panels: Array<{ type: string; title: string; targets?: Array<{ expr: string }> }> };
  t.equal(dash.uid, 'zc-overview');
  const exprs = dash.panels.flatMap((p) => (p.targets ?? []).map((x) => ({ title: p.title, expr: x.expr })));
  t.ok(exprs.length >= 15, `${exprs.length} queries`);
  for (const { title, expr } of exprs) {
    const used = [...expr.matchAll(/\b(zc_[a-z_]+)/g)].map((m) => m[1] as string);
    t.ok(used.every((n) => defined.has(n)), `${title}: ${used.join(', ') || 'Node runtime metrics'} exported`);
  }
  // What operations.md asks to see: RED per route and per subject, outbox, JetStream, queues, latency.
  const all = exprs.map((e) => e.expr).join('\n');
  for (const n of ['zc_http_requests_total', 'zc_bus_requests_total', 'zc_bus_events_total', 'zc_outbox_lag_seconds', 'zc_outbox_backlog', 'zc_jetstream_consumer_pending_messages', 'zc_event_queues', 'zc_events_parked_polls', 'zc_event_delivery_latency_seconds_bucket']) {
    t.ok(all.includes(n), `the dashboard shows ${n}`);
  }
});

t.test('missing credentials stop the render with a message naming them', async (t) => {
  const { error } = renderText({ credentials: { existingSecrets: { secretKey: 'k' } } });
  t.match(error, /credentials\.create\.databaseUrl, credentials\.create\.redisUrl, credentials\.create\.natsUrl/);
  t.notMatch(error, /create\.secretKey/);
});

t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
