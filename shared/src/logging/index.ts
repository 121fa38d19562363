/**
 * One pino root logger per process. Credentials never reach the log: the paths below are
 * redacted wherever they appear in a logged object.
 */
import { pino, type Logger } from 'pino';
import { currentSpanIds } from '../telemetry/index.js';

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

/**
 * The process logger. JSON lines by default (what log pipelines want); with
 * ZC_LOG_FORMAT=pretty (npm start at a terminal) coloured one-line records through
 * pino-pretty, a development dependency that production images do not carry.
 */
export function createLogger(opts: { service: string; level?: string; instance?: string; format?: 'json' | 'pretty' }): Logger {
  const options = {
    level: opts.level ?? process.env.LOG_LEVEL ?? 'info',
    base: { service: opts.service, instance: opts.instance },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    // trace_id and span_id on every line logged inside a span (tracing on), so a log search
    // and a trace lead to each other. Nothing is added, and little is spent, with tracing off.
    mixin: () => currentSpanIds() ?? {},
  };
  if ((opts.format ?? process.env.ZC_LOG_FORMAT) === 'pretty') {
    return pino({
      ...options,
      transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service,instance', singleLine: true } },
    });
  }
  return pino(options);
}
