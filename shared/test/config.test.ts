/**
 * The one configuration schema: defaults, strict parsing, and a refusal that names the
 * variable for each bad value (the three that used to pass silently first).
 */
import t from 'tap';
import { ConfigError, ENV_SCHEMA, loadConfig, readEnv, unknownVariables } from '../src/config/index.js';

const problemsOf = (env: NodeJS.ProcessEnv) => {
  try {
    readEnv(env);
    return [];
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return e.problems;
  }
};

t.test('defaults for an empty environment', async (t) => {
  const e = readEnv({});
  t.match(e, { ZC_DB_POOL_SIZE: 10, ZC_RATE_LIMIT_PER_MINUTE: 200, ZC_AUTH_CACHE_TTL_MS: 600_000, ZC_TRUST_PROXY: 'false', ZC_UPLOADS_BACKEND: 'local', ZC_S3_FORCE_PATH_STYLE: false });
  t.equal(e.ZC_REALM_UPLOAD_QUOTA_MIB, undefined, 'optional variables stay unset');
  t.same(readEnv({ ZC_DB_POOL_SIZE: '' }).ZC_DB_POOL_SIZE, 10, 'empty means unset');
});

t.test('values that used to be accepted silently now stop the process, naming the variable', async (t) => {
  const cases: Array<[string, string, RegExp]> = [
    ['ZC_RATE_LIMIT_PER_MINUTE', 'abc', /must be a whole number >= 0, got "abc"/],
    ['ZC_AUTH_CACHE_TTL_MS', '30s', /must be a whole number >= 0 and <= 3600000, got "30s"/],
    ['ZC_DB_POOL_SIZE', '0', /must be a whole number >= 1 and <= 500, got "0"/],
    ['ZC_DB_POOL_SIZE', '1.5', /whole number/],
    ['ZC_GATEWAY_PORT', '70000', /<= 65535/],
    ['ZC_S3_FORCE_PATH_STYLE', 'maybe', /must be true or false/],
    ['ZC_UPLOADS_BACKEND', 'ftp', /must be one of local, s3/],
    ['LOG_LEVEL', 'verbose', /must be one of fatal, error/],
    ['ZC_TRUST_PROXY', 'everyone', /must be a value matching/],
    ['ZC_SUBJECT_PREFIX', 'zc.prod', /must be a value matching/],
  ];
  for (const [variable, value, message] of cases) {
    const problems = problemsOf({ [variable]: value });
    t.equal(problems.length, 1, `${variable}=${value}: one problem`);
    t.equal(problems[0]?.variable, variable);
    t.match(problems[0]?.message, message);
  }
  t.throws(() => loadConfig({}, { ZC_DB_POOL_SIZE: '0' }), { name: 'ConfigError', message: /ZC_DB_POOL_SIZE/ }, 'loadConfig checks too');
});

t.test('every bad variable is reported at once; secrets are never echoed', async (t) => {
  const problems = problemsOf({ ZC_RATE_LIMIT_PER_MINUTE: 'x', ZC_SECRET_KEY: 'hunter2', ZC_DATABASE_URL: 'mysql://root:pw@db/zc' });
  t.same(problems.map((p) => p.variable).sort(), ['ZC_DATABASE_URL', 'ZC_RATE_LIMIT_PER_MINUTE', 'ZC_SECRET_KEY']);
  t.notMatch(JSON.stringify(problems), /hunter2|root:pw/);
});

t.test('production refuses the development key', async (t) => {
  t.throws(() => loadConfig({}, { NODE_ENV: 'production' }), { message: /ZC_SECRET_KEY must be set in production/ });
  t.ok(loadConfig({}, { NODE_ENV: 'production', ZC_SECRET_KEY: 'ab'.repeat(32) }));
});

t.test('every variable is documented', async (t) => {
  for (const [name, schema] of Object.entries(ENV_SCHEMA.properties)) {
    const m = (schema as unknown as { 'x-zc'?: { description?: string; scope?: string[] } })['x-zc'];
    t.ok(m?.description && m.scope?.length, `${name} has a description and a scope`);
  }
});

t.test('unknown ZC_ variables are named, with the closest known one', async (t) => {
  t.same(
    unknownVariables({ ZC_RATE_LIMT_PER_MINUTE: '10', ZC_FROBNICATE: '1', ZC_DATABASE_URL: 'postgres://x', ZC_TEST_INFRA: 'local', ZC_BENCH_OUT: 'x', PATH: '/bin' }),
    [{ variable: 'ZC_FROBNICATE' }, { variable: 'ZC_RATE_LIMT_PER_MINUTE', didYouMean: 'ZC_RATE_LIMIT_PER_MINUTE' }],
  );
  t.same(unknownVariables({ ZC_DATABASE_URL: 'postgres://x' }), [], 'known and tooling variables are not reported');
});
