/**
 * The OpenTelemetry preload, given to node before the entry point:
 *   node --import @zc/shared/instrumentation services/<name>/dist/main.js
 * (the image's entrypoint, the chart and `npm start` with an OTLP endpoint do this). A
 * preload finishes, top-level await included, before the entry point's import graph is even
 * loaded; an import inside main.ts would not (ESM links every static import first), which
 * left http, pg and ioredis unpatched. Without an OTLP endpoint this module does nothing.
 */
import { register } from 'node:module';
import path from 'node:path';
import { startTelemetry, telemetryEnabled } from '../telemetry/index.js';

if (telemetryEnabled()) {
  // Loader hook (import-in-the-middle) so that modules imported as ESM are patched as well
  // as those loaded with require (require-in-the-middle, installed by the instrumentations).
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  // services/<name>/dist/main.js names the service unless ZC_SERVICE does.
  const service = process.env.ZC_SERVICE ?? path.basename(path.resolve(process.argv[1] ?? '', '..', '..'));
  await startTelemetry(`zc-${service}`, process.env.ZC_INSTANCE);
}
