/**
 * A real S3-compatible server for tests (s3rver, in this process, files in a temporary
 * directory), never a mock. Its fixed credentials are S3RVER / S3RVER.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';

export interface TestS3 {
  endpoint: string;
  bucket: string;
}

interface Teardownable {
  teardown(fn: () => unknown): void;
}

export async function startTestS3(t: Teardownable, bucket = 'zc-uploads'): Promise<TestS3> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'zc-s3rver-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{ name: bucket }], vhostBuckets: false });
  const { port } = await server.run();
  t.teardown(async () => {
    // Keep-alive sockets of SDK clients would hold close() open until they time out.
    server.httpServer?.closeAllConnections();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  // The AWS SDK reads credentials from the environment, as a deployment would give them.
  process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
  process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';
  return { endpoint: `http://127.0.0.1:${port}`, bucket };
}
