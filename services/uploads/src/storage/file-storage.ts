/**
 * The one narrow interface every storage backend implements. Keys are path ids made by the
 * service (lib/file-names.ts), never raw client input; backends still refuse a key that could
 * leave their root.
 */
import type { Readable } from 'node:stream';

export interface StoredObject {
  body: Readable;
  size: number;
}

export interface FileStorage {
  /**
   * Stores `body` under `key`. Resolves once the whole object is durable; if `body` fails or
   * is destroyed, rejects and leaves nothing behind under `key` (no half-written file).
   */
  write(key: string, body: Readable, contentType: string): Promise<void>;
  /** The object's bytes as a stream, or undefined when there is none. */
  read(key: string): Promise<StoredObject | undefined>;
  /** Removes the object; removing a missing one is not an error. */
  remove(key: string): Promise<void>;
  /** Removes every object whose key starts with `prefix/` (a realm's files); how many there were. */
  removeUnder(prefix: string): Promise<number>;
  /**
   * A URL the client may fetch the object from directly for `ttlSeconds`, served with these
   * headers; undefined when this backend serves bytes only through us.
   */
  signedDownloadUrl(key: string, opts: { ttlSeconds: number; contentType: string; contentDisposition: string }): Promise<string | undefined>;
  /** Whether the backend is reachable (readiness). */
  check(): Promise<boolean>;
  /** Releases connections (service stop). */
  close(): void;
}

/** Refuses keys that are empty, absolute, or have empty, `.` or `..` segments. */
export function assertSafeKey(key: string): void {
  const parts = key.split('/');
  if (key.length === 0 || key.length > 1024 || parts.some((p) => p === '' || p === '.' || p === '..' || p.includes('\\') || p.includes('\0'))) {
    throw new Error(`unsafe storage key ${JSON.stringify(key)}`);
  }
}
