/**
 * asOutage: a dependency that is down (PostgreSQL restarting, Redis or NATS gone) reaches
 * clients as a 503 they retry, while bugs stay 500s and AppErrors keep their own status.
 */
import t from 'tap';
import { DatabaseError } from 'pg';
import { AppError, asOutage } from '../src/errors/index.js';

const pgError = (code: string) => Object.assign(new DatabaseError('boom', 0, 'error'), { code });

t.test('dependency failures become SERVICE_UNAVAILABLE 503', async (t) => {
  for (const code of ['57P01', '57P03', '08006', '08001', '53300', '40001', '40P01']) {
    const e = asOutage(pgError(code));
    t.equal(e?.httpStatus, 503, `PostgreSQL ${code}`);
    t.equal(e?.code, 'SERVICE_UNAVAILABLE');
  }
  t.equal(asOutage(new Error('Connection terminated unexpectedly'))?.httpStatus, 503, 'pg connection lost');
  t.equal(asOutage(new Error('timeout exceeded when trying to connect'))?.httpStatus, 503, 'pg pool connect timeout');
  t.equal(asOutage(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' }))?.httpStatus, 503, 'refused');
  t.equal(asOutage(Object.assign(new Error('Reached the max retries per request limit (which is 2).'), { name: 'MaxRetriesPerRequestError' }))?.httpStatus, 503, 'ioredis');
  t.equal(asOutage(new Error('Connection is closed.'))?.httpStatus, 503, 'ioredis closed');
});

t.test('everything else is not an outage', async (t) => {
  t.equal(asOutage(pgError('23505')), undefined, 'unique violation');
  t.equal(asOutage(pgError('42P01')), undefined, 'undefined table (a bug)');
  t.equal(asOutage(new TypeError('x is undefined')), undefined);
  t.equal(asOutage(new AppError('BAD_REQUEST', 'no', 400)), undefined, 'AppErrors keep their status');
  t.equal(asOutage('string'), undefined);
  t.equal(asOutage(null), undefined);
});
