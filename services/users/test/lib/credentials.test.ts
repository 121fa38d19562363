/** Passwords (scrypt) and API keys (HMAC lookup + AES-GCM copy), with no database. */
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { ApiKeyVault, generateApiKey, hashPassword, isWellFormedApiKey, verifyPassword } from '../../src/lib/credentials.js';

t.test('scrypt password hashes', async (t) => {
  const stored = await hashPassword('correct horse');
  t.match(stored, /^scrypt\$16384\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/, 'self-describing: scheme, cost, salt, hash');
  t.equal(await verifyPassword('correct horse', stored), true);
  t.equal(await verifyPassword('correct horsE', stored), false);
  t.equal(await verifyPassword('', stored), false);
  t.not(await hashPassword('correct horse'), stored, 'a fresh salt every time');
  t.equal(await verifyPassword('naïve ☃ password', await hashPassword('naïve ☃ password')), true, 'unicode');
});

t.test('stored values that are not ours never verify', async (t) => {
  for (const stored of [null, '', 'plain', 'bcrypt$10$abc', 'scrypt$16384$8$1$$', 'scrypt$16384$8$1']) {
    t.equal(await verifyPassword('x', stored), false, JSON.stringify(stored));
  }
});

t.test('API keys look like Zulip\'s', async (t) => {
  const keys = new Set(Array.from({ length: 50 }, generateApiKey));
  t.equal(keys.size, 50, 'no repeats');
  for (const k of keys) t.ok(isWellFormedApiKey(k), k);
  for (const bad of ['', 'a'.repeat(31), 'a'.repeat(33), `${'a'.repeat(31)}-`, `${'a'.repeat(31)}é`, `${'a'.repeat(31)} `]) {
    t.equal(isWellFormedApiKey(bad), false, JSON.stringify(bad));
  }
});

t.test('ApiKeyVault', async (t) => {
  const secret = randomBytes(32).toString('hex');
  const vault = new ApiKeyVault(secret);
  const key = generateApiKey();

  t.test('lookup hashes are stable per secret and never the key', async (t) => {
    t.same(vault.lookupHash(key), new ApiKeyVault(secret).lookupHash(key), 'same secret, same hash (so lookups work after restart)');
    t.notSame(vault.lookupHash(key), new ApiKeyVault(randomBytes(32).toString('hex')).lookupHash(key), 'another secret, another hash');
    t.notSame(vault.lookupHash(key), vault.lookupHash(generateApiKey()));
    t.equal(vault.lookupHash(key).length, 32);
    t.notOk(vault.lookupHash(key).toString('latin1').includes(key));
  });

  t.test('encrypt/decrypt round trip, fresh IV each time', async (t) => {
    const a = vault.encrypt(key);
    const b = vault.encrypt(key);
    t.notSame(a, b, 'two encryptions differ');
    t.equal(vault.decrypt(a), key);
    t.equal(vault.decrypt(b), key);
    t.notOk(a.toString('latin1').includes(key), 'not stored in clear');
  });

  t.test('tampered or foreign ciphertexts are refused', async (t) => {
    const blob = vault.encrypt(key);
    const flipped = Buffer.from(blob);
    flipped[flipped.length - 1] = (flipped[flipped.length - 1] as number) ^ 1;
    t.throws(() => vault.decrypt(flipped), 'GCM tag catches a flipped bit');
    t.throws(() => new ApiKeyVault(randomBytes(32).toString('hex')).decrypt(blob), 'another secret cannot read it');
  });

  t.test('the two derived keys differ: the lookup hash is not the encryption', async (t) => {
    // Same plaintext through HMAC and through AES-GCM must share no bytes worth noticing.
    const blob = vault.encrypt(key);
    t.notOk(blob.includes(vault.lookupHash(key).subarray(0, 8)));
  });
});
