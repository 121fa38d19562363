/**
 * One pino root logger per process. Credentials never reach the log: the paths below are
 * redacted wherever they appear in a logged object.
 */
import { pino, type Logger } from 'pino';

export type { Logger };

export const REDACTED_PATHS = [
  'password',
  'api_key',
  'apiKey',
  '*.password',
  '*.api_key',
  '*.apiKey',
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  '*.authorization',
  'content',
  '*.content',
];

export function createLogger(opts: { service: string; level?: string; instance?: string }): Logger {
  return pino({
    level: opts.level ?? process.env.LOG_LEVEL ?? 'info',
    base: { service: opts.service, instance: opts.instance },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}
