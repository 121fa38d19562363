/**
 * Passwords and API keys. Passwords are hashed with scrypt (memory-hard). API keys are
 * never stored in plain text: an HMAC under the server secret finds the user, and an
 * AES-256-GCM copy lets fetch_api_key return the key. The two keys are derived from the one
 * server secret with HKDF so neither can stand in for the other.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, randomInt, scrypt, timingSafeEqual } from 'node:crypto';

const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 32 };

function scryptAsync(password: string, salt: Buffer, p: typeof SCRYPT): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, p.keylen, { N: p.N, r: p.r, p: p.p, maxmem: 64 * 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, SCRYPT);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  if (!stored) return false;
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const key = await scryptAsync(password, Buffer.from(salt, 'base64'), { N: Number(n), r: Number(r), p: Number(p), keylen: expected.length });
  return timingSafeEqual(key, expected);
}

const KEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A new 32-character alphanumeric API key, as Zulip issues them. */
export function generateApiKey(): string {
  let s = '';
  for (let i = 0; i < 32; i++) s += KEY_ALPHABET[randomInt(KEY_ALPHABET.length)];
  return s;
}

export const isWellFormedApiKey = (key: string) => /^[A-Za-z0-9]{32}$/.test(key);

export class ApiKeyVault {
  private readonly macKey: Buffer;
  private readonly encKey: Buffer;

  constructor(secretHex: string) {
    const secret = Buffer.from(secretHex, 'hex');
    this.macKey = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'zc api key lookup', 32));
    this.encKey = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'zc api key encryption', 32));
  }

  lookupHash(apiKey: string): Buffer {
    return createHmac('sha256', this.macKey).update(apiKey).digest();
  }

  encrypt(apiKey: string): Buffer {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.encKey, iv);
    const body = Buffer.concat([c.update(apiKey, 'utf8'), c.final()]);
    return Buffer.concat([iv, c.getAuthTag(), body]);
  }

  decrypt(blob: Buffer): string {
    const d = createDecipheriv('aes-256-gcm', this.encKey, blob.subarray(0, 12));
    d.setAuthTag(blob.subarray(12, 28));
    return Buffer.concat([d.update(blob.subarray(28)), d.final()]).toString('utf8');
  }
}
