/**
 * Every route module and the URL it serves; the file path under routes/ mirrors the URL.
 * New endpoints are added here, one line each.
 */
import type { FastifyInstance } from 'fastify';
import fetchApiKeyRoutes from './api/v1/fetch-api-key.js';
import serverSettingsRoutes from './api/v1/server-settings.js';
import usersRoutes from './api/v1/users/index.js';
import meRoutes from './api/v1/users/me/index.js';
import realmFiltersRoutes from './api/v1/realm/filters/index.js';
import realmLinkifiersRoutes from './api/v1/realm/linkifiers/index.js';
import alertWordsRoutes from './api/v1/users/me/alert-words/index.js';

export async function registerRoutes(app: FastifyInstance): Promise<void> {
  const v1 = (path: string) => ({ prefix: `/api/v1${path}` });
  await app.register(serverSettingsRoutes, v1('/server_settings'));
  await app.register(fetchApiKeyRoutes, v1('/fetch_api_key'));
  await app.register(usersRoutes, v1('/users'));
  await app.register(meRoutes, v1('/users/me'));
  await app.register(realmFiltersRoutes, v1('/realm/filters'));
  await app.register(realmLinkifiersRoutes, v1('/realm/linkifiers'));
  await app.register(alertWordsRoutes, v1('/users/me/alert_words'));
}
