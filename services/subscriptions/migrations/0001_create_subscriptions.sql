-- Streams, subscriptions with personal settings, and per-user topic settings.
CREATE TABLE subscriptions.stream (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  realm_id bigint NOT NULL,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  rendered_description text NOT NULL DEFAULT '',
  invite_only boolean NOT NULL DEFAULT false,
  is_web_public boolean NOT NULL DEFAULT false,
  history_public_to_subscribers boolean NOT NULL DEFAULT true,
  -- 1 anyone, 2 administrators, 3 full members, 4 moderators (Zulip's numbering)
  stream_post_policy integer NOT NULL DEFAULT 1,
  -- null inherits the realm's setting; -1 keeps messages forever
  message_retention_days integer,
  creator_id bigint,
  can_remove_subscribers_group_id bigint NOT NULL,
  -- The random part of the stream's incoming-email address.
  email_token text NOT NULL,
  is_archived boolean NOT NULL DEFAULT false,
  date_created timestamptz NOT NULL DEFAULT now()
);
-- Stream names are unique in a realm regardless of case, as in Zulip.
CREATE UNIQUE INDEX stream_realm_name ON subscriptions.stream (realm_id, lower(name));

CREATE TABLE subscriptions.subscription (
  user_id bigint NOT NULL,
  stream_id bigint NOT NULL REFERENCES subscriptions.stream(id),
  realm_id bigint NOT NULL,
  -- An unsubscribed user keeps the row (inactive), so resubscribing restores the settings
  -- and /register can list the stream under `unsubscribed`.
  active boolean NOT NULL DEFAULT true,
  color text NOT NULL,
  is_muted boolean NOT NULL DEFAULT false,
  pin_to_top boolean NOT NULL DEFAULT false,
  -- null inherits the user's global default
  desktop_notifications boolean,
  email_notifications boolean,
  push_notifications boolean,
  audible_notifications boolean,
  wildcard_mentions_notify boolean,
  PRIMARY KEY (user_id, stream_id)
);
CREATE INDEX subscription_stream_active ON subscriptions.subscription (stream_id) WHERE active;

CREATE TABLE subscriptions.user_topic (
  user_id bigint NOT NULL,
  stream_id bigint NOT NULL REFERENCES subscriptions.stream(id),
  realm_id bigint NOT NULL,
  topic_name text NOT NULL,
  -- 1 muted, 2 unmuted, 3 followed (0, "inherit", is the absence of a row)
  visibility_policy integer NOT NULL,
  last_updated timestamptz NOT NULL DEFAULT now()
);
-- Topics match case-insensitively, as in Zulip.
CREATE UNIQUE INDEX user_topic_key ON subscriptions.user_topic (user_id, stream_id, lower(topic_name));

-- Streams new users of a realm are subscribed to (Zulip's default streams).
CREATE TABLE subscriptions.default_stream (
  realm_id bigint NOT NULL,
  stream_id bigint NOT NULL REFERENCES subscriptions.stream(id),
  PRIMARY KEY (realm_id, stream_id)
);

-- Statistics fed by the messages service's message.sent events (the messages service owns messages).
CREATE TABLE subscriptions.stream_stats (
  stream_id bigint PRIMARY KEY REFERENCES subscriptions.stream(id),
  first_message_id bigint NOT NULL
);
CREATE TABLE subscriptions.stream_daily_traffic (
  stream_id bigint NOT NULL REFERENCES subscriptions.stream(id),
  day date NOT NULL,
  message_count integer NOT NULL,
  PRIMARY KEY (stream_id, day)
);

-- The copy of the users service's realms and users (subscriptions.realm,
-- subscriptions.user_account) is created by @zc/shared/directory's migrations
-- (ServiceDefinition.migrationLibraries).
