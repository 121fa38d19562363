/**
 * Every route module and the URL it serves; the file path under routes/ mirrors the URL.
 * New endpoints are added here, one line each.
 */
import type { FastifyInstance } from 'fastify';
import fetchApiKeyRoutes from './api/v1/fetch-api-key.js';
import serverSettingsRoutes from './api/v1/server-settings.js';
import usersRoutes from './api/v1/users/index.js';
import meRoutes from './api/v1/users/me/index.js';
import subscriptionStatusRoutes from './api/v1/users/subscription-status.js';
import realmFiltersRoutes from './api/v1/realm/filters/index.js';
import realmLinkifiersRoutes from './api/v1/realm/linkifiers/index.js';
import realmProfileFieldsRoutes from './api/v1/realm/profile-fields/index.js';
import profileDataRoutes from './api/v1/users/me/profile-data/index.js';
import alertWordsRoutes from './api/v1/users/me/alert-words/index.js';
import subscriptionsRoutes from './api/v1/users/me/subscriptions/index.js';
import subscriptionPropertiesRoutes from './api/v1/users/me/subscriptions/properties.js';
import mutedTopicsRoutes from './api/v1/users/me/subscriptions/muted-topics.js';
import streamTopicsRoutes from './api/v1/users/me/topics.js';
import streamsRoutes from './api/v1/streams/index.js';
import getStreamIdRoutes from './api/v1/get-stream-id.js';
import registerQueueRoutes from './api/v1/register/index.js';
import eventsRoutes from './api/v1/events/index.js';
import draftsRoutes from './api/v1/drafts/index.js';
import messagesRoutes from './api/v1/messages/index.js';
import messageFlagsRoutes from './api/v1/messages/flags/index.js';
import matchesNarrowRoutes from './api/v1/messages/matches-narrow/index.js';
import markAllAsReadRoutes from './api/v1/mark-all-as-read.js';
import markStreamAsReadRoutes from './api/v1/mark-stream-as-read.js';
import markTopicAsReadRoutes from './api/v1/mark-topic-as-read.js';
import userUploadsRoutes from './api/v1/user-uploads/index.js';
import attachmentsRoutes from './api/v1/attachments/index.js';
import fileDownloadRoutes from './user-uploads/index.js';
import myPresenceRoutes from './api/v1/users/me/presence.js';
import userPresenceRoutes from './api/v1/users/presence.js';
import realmPresenceRoutes from './api/v1/realm/presence.js';
import userGroupsRoutes from './api/v1/user_groups/index.js';
import typingRoutes from './api/v1/typing.js';

export async function registerRoutes(app: FastifyInstance): Promise<void> {
  const v1 = (path: string) => ({ prefix: `/api/v1${path}` });
  await app.register(serverSettingsRoutes, v1('/server_settings'));
  await app.register(fetchApiKeyRoutes, v1('/fetch_api_key'));
  await app.register(usersRoutes, v1('/users'));
  await app.register(meRoutes, v1('/users/me'));
  await app.register(subscriptionStatusRoutes, v1('/users'));
  await app.register(realmFiltersRoutes, v1('/realm/filters'));
  await app.register(realmLinkifiersRoutes, v1('/realm/linkifiers'));
  await app.register(realmProfileFieldsRoutes, v1('/realm/profile_fields'));
  await app.register(profileDataRoutes, v1('/users/me/profile_data'));
  await app.register(alertWordsRoutes, v1('/users/me/alert_words'));
  await app.register(subscriptionsRoutes, v1('/users/me/subscriptions'));
  await app.register(subscriptionPropertiesRoutes, v1('/users/me/subscriptions/properties'));
  await app.register(mutedTopicsRoutes, v1('/users/me/subscriptions/muted_topics'));
  await app.register(streamTopicsRoutes, v1('/users/me'));
  await app.register(streamsRoutes, v1('/streams'));
  await app.register(getStreamIdRoutes, v1('/get_stream_id'));
  await app.register(registerQueueRoutes, v1('/register'));
  await app.register(eventsRoutes, v1('/events'));
  await app.register(draftsRoutes, v1('/drafts'));
  await app.register(messagesRoutes, v1('/messages'));
  await app.register(messageFlagsRoutes, v1('/messages/flags'));
  await app.register(matchesNarrowRoutes, v1('/messages/matches_narrow'));
  await app.register(markAllAsReadRoutes, v1('/mark_all_as_read'));
  await app.register(markStreamAsReadRoutes, v1('/mark_stream_as_read'));
  await app.register(markTopicAsReadRoutes, v1('/mark_topic_as_read'));
  await app.register(userUploadsRoutes, v1('/user_uploads'));
  await app.register(attachmentsRoutes, v1('/attachments'));
  await app.register(fileDownloadRoutes, { prefix: '/user_uploads' });
  await app.register(myPresenceRoutes, v1('/users/me/presence'));
  await app.register(userPresenceRoutes, v1('/users'));
  await app.register(realmPresenceRoutes, v1('/realm/presence'));
  await app.register(userGroupsRoutes, v1('/user_groups'));
  await app.register(typingRoutes, v1('/typing'));
}
