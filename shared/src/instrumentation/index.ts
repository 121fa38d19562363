/**
 * Imported first by every service's main.ts: starts the OpenTelemetry SDK (when
 * OTEL_EXPORTER_OTLP_ENDPOINT is set) before pg, ioredis and http are loaded, so their
 * instrumentations can patch them. ESM evaluates this module, top-level await included,
 * before the main module's later imports.
 */
import path from 'node:path';
import { startTelemetry } from '../telemetry/index.js';

const service = process.env.ZC_SERVICE ?? path.basename(path.resolve(process.argv[1] ?? '', '..', '..'));
await startTelemetry(`zc-${service}`);
