import t from 'tap';
import { signToken, tokenKey, verifyToken } from '../../src/lib/tokens.js';

const SECRET = 'ab'.repeat(32);
const NOW = 1_700_000_000;

t.test('a token verifies with its key until it expires', async (t) => {
  const key = tokenKey(SECRET, 'download');
  const token = signToken(key, { a: 5 }, 60, NOW);
  t.match(verifyToken(key, token, NOW + 60), { a: 5, exp: NOW + 60 });
  t.equal(verifyToken(key, token, NOW + 61), undefined, 'expired');
});

t.test('a token is refused by another purpose, when altered, or malformed', async (t) => {
  const key = tokenKey(SECRET, 'download');
  const token = signToken(key, { a: 5 }, 60, NOW);
  t.equal(verifyToken(tokenKey(SECRET, 'temporary'), token, NOW), undefined, 'another purpose');
  t.equal(verifyToken(tokenKey('cd'.repeat(32), 'download'), token, NOW), undefined, 'another secret');
  const [body, mac] = token.split('.') as [string, string];
  const forged = Buffer.from(JSON.stringify({ a: 6, exp: NOW + 60 })).toString('base64url');
  t.equal(verifyToken(key, `${forged}.${mac}`, NOW), undefined, 'claims changed');
  for (const bad of ['', '.', 'x', `${body}.`, `${body}.${mac}.x`, `${body}.${mac.slice(1)}`]) t.equal(verifyToken(key, bad, NOW), undefined, JSON.stringify(bad));
});
