import type { FastifyInstance } from 'fastify';
import { JsonObject, RealmSettingsPatch, users } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { custom, json } from '@zc/shared/params';
import { AppError } from '@zc/shared/errors';
import { params, scalarParams } from '../../../../plugins/params.js';

/**
 * A time limit or retention period: an integer, or a word such as `unlimited`, JSON-encoded
 * (`"unlimited"`) as Zulip's web app sends it or bare as python-zulip-api does.
 */
const intOrWord = () =>
  custom<number | string>((raw, name) => {
    let v: unknown = raw;
    if (typeof raw === 'string') {
      try {
        v = JSON.parse(raw);
      } catch {
        v = raw;
      }
    }
    if ((typeof v === 'number' && Number.isSafeInteger(v)) || typeof v === 'string') return v;
    throw new AppError('BAD_REQUEST', `Bad value for '${name}': ${typeof raw === 'string' ? raw : JSON.stringify(raw)}`, 400);
  }).optional();

const scalars = Object.entries(RealmSettingsPatch.properties as Record<string, { type?: unknown }>).filter(([, s]) =>
  ['boolean', 'integer', 'string'].includes(String(s.type)),
);
const realmParams = {
  ...scalarParams({ properties: Object.fromEntries(scalars) }),
  message_content_edit_limit_seconds: intOrWord(),
  message_content_delete_limit_seconds: intOrWord(),
  message_retention_days: intOrWord(),
  authentication_methods: json(JsonObject).optional(),
};

/** /api/v1/realm: PATCH the organisation's settings (administrators; some owners only). */
export default async function realmRoutes(app: FastifyInstance) {
  const { bus } = app.deps;
  app.patch('/', async (request) => {
    const changes = params(request, realmParams) as RealmSettingsPatch;
    return success(await bus.request(users.updateRealm, { actor: request.actor, changes }));
  });
}
