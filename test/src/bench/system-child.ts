/**
 * The benchmark's own system, in a process of its own: every service in-process as the test
 * harness runs them (own database, prefixes, rate limits off), but away from the load
 * generator, so the generator's event loop and garbage collector never stall the services
 * it measures. Prints one JSON line describing the system, then runs until its stdin
 * closes or it gets SIGTERM, and removes its database and prefixes on the way out.
 */
import { startSystem, type ServiceName } from '../harness.js';

const teardowns: Array<() => unknown> = [];
const owner = { teardown: (fn: () => unknown) => void teardowns.push(fn) };

async function shutdown(code: number): Promise<never> {
  for (const fn of teardowns.reverse()) {
    try {
      await fn();
    } catch (err) {
      console.error('bench system: teardown failed', err);
    }
  }
  process.exit(code);
}

const replicas = JSON.parse(process.env.ZC_BENCH_REPLICAS_JSON ?? '{}') as Partial<Record<ServiceName, number>>;

try {
  const sys = await startSystem(owner, { replicas });
  const { iago, desdemona, hamlet, othello, polonius, bot } = sys.people;
  const strip = (a: typeof iago) => ({ user_id: a.user_id, email: a.email, api_key: a.api_key, full_name: a.full_name });
  const config = sys.env.config;
  process.stdout.write(
    `${JSON.stringify({
      baseUrl: sys.baseUrl,
      gatewayUrls: sys.gatewayUrls,
      people: { iago: strip(iago), desdemona: strip(desdemona), hamlet: strip(hamlet), othello: strip(othello), polonius: strip(polonius), bot: strip(bot) },
      infra: {
        databaseUrl: sys.env.databaseUrl,
        natsUrl: config.natsUrl,
        redisUrl: config.redisUrl,
        subjectPrefix: config.subjectPrefix,
        redisPrefix: config.redisPrefix,
      },
    })}\n`,
  );
} catch (err) {
  console.error('bench system: failed to start', err);
  await shutdown(1);
}

process.stdin.on('end', () => void shutdown(0));
process.stdin.resume();
process.once('SIGTERM', () => void shutdown(0));
process.once('SIGINT', () => void shutdown(0));
