-- Read models of other services' data (fed by their domain events, or by a synchronous
-- answer when an event has not arrived yet). Never written by clients directly.

-- The copy of the users service's realms and users (messages.realm, messages.user_account)
-- is created by @zc/shared/directory's migrations (ServiceDefinition.migrationLibraries).

-- Zulip's Recipient: the set a message goes to. type 1 = one user (personal), 2 = stream,
-- 3 = a group of users (huddle). recipient_id is part of the API (spec 2.2).
CREATE TABLE messages.recipient (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  realm_id bigint NOT NULL,
  type smallint NOT NULL,
  -- user id (personal), stream id (stream); null for huddles.
  type_id bigint,
  -- The users of a personal or huddle recipient, sorted; empty for streams.
  user_ids bigint[] NOT NULL DEFAULT '{}'
);
CREATE UNIQUE INDEX recipient_type_id ON messages.recipient (type, type_id) WHERE type_id IS NOT NULL;
CREATE UNIQUE INDEX recipient_huddle ON messages.recipient (realm_id, user_ids) WHERE type = 3;

CREATE TABLE messages.stream (
  id bigint PRIMARY KEY,
  realm_id bigint NOT NULL,
  name text NOT NULL,
  invite_only boolean NOT NULL,
  is_web_public boolean NOT NULL,
  history_public_to_subscribers boolean NOT NULL,
  stream_post_policy integer NOT NULL,
  is_archived boolean NOT NULL DEFAULT false,
  recipient_id bigint NOT NULL UNIQUE REFERENCES messages.recipient(id)
);
CREATE INDEX stream_realm_name ON messages.stream (realm_id, lower(name));

-- Current subscribers only: a removed subscription is deleted, which is what every access
-- check reads (CVE-2024-27286: leftover per-user message rows must not grant access).
CREATE TABLE messages.subscriber (
  stream_id bigint NOT NULL,
  user_id bigint NOT NULL,
  is_muted boolean NOT NULL DEFAULT false,
  PRIMARY KEY (stream_id, user_id)
);
CREATE INDEX subscriber_user ON messages.subscriber (user_id);

CREATE TABLE messages.user_topic (
  user_id bigint NOT NULL,
  stream_id bigint NOT NULL,
  topic_key text NOT NULL,
  visibility_policy integer NOT NULL,
  PRIMARY KEY (user_id, stream_id, topic_key)
);

-- Messages. Ids come from message_id_seq, drawn under a per-realm lock so that within a
-- realm they grow in commit order (see actions/send-writer.ts).
CREATE SEQUENCE messages.message_id_seq;

CREATE TABLE messages.message (
  id bigint PRIMARY KEY,
  realm_id bigint NOT NULL,
  sender_id bigint NOT NULL,
  recipient_id bigint NOT NULL,
  -- Denormalised from the recipient: null for direct messages.
  stream_id bigint,
  topic text NOT NULL DEFAULT '',
  content text NOT NULL,
  rendered_content text NOT NULL,
  rendered_content_version integer NOT NULL,
  date_sent timestamptz NOT NULL,
  sending_client text NOT NULL,
  is_me_message boolean NOT NULL DEFAULT false,
  has_link boolean NOT NULL DEFAULT false,
  has_image boolean NOT NULL DEFAULT false,
  has_attachment boolean NOT NULL DEFAULT false,
  search_tsv tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, topic || ' ' || content)) STORED
);
-- History of one conversation (stream, or one DM pair) and of one topic, newest first.
CREATE INDEX message_recipient_id ON messages.message (recipient_id, id);
CREATE INDEX message_recipient_topic_id ON messages.message (recipient_id, lower(topic), id);
CREATE INDEX message_sender_id ON messages.message (sender_id, id);
CREATE INDEX message_search ON messages.message USING gin (search_tsv);

-- Zulip's UserMessage: one row per user who received (or later touched) a message.
-- flags bits: read 1, starred 2, collapsed 4, mentioned 8, wildcard_mentioned 16,
-- has_alert_word 32, historical 64, is_private 128 (lib/flags.ts).
CREATE TABLE messages.user_message (
  user_id bigint NOT NULL,
  message_id bigint NOT NULL,
  flags integer NOT NULL DEFAULT 0,
  PRIMARY KEY (user_id, message_id)
) WITH (fillfactor = 90);
CREATE INDEX user_message_unread ON messages.user_message (user_id, message_id) WHERE (flags & 1) = 0;
CREATE INDEX user_message_starred ON messages.user_message (user_id, message_id) WHERE (flags & 2) <> 0;
CREATE INDEX user_message_mentioned ON messages.user_message (user_id, message_id) WHERE (flags & 24) <> 0;
CREATE INDEX user_message_private ON messages.user_message (user_id, message_id) WHERE (flags & 128) <> 0;

-- POST /messages with an Idempotency-Key header: the same key from the same user returns
-- the first message's id instead of sending again (operations.md §3.4).
CREATE TABLE messages.idempotency_key (
  user_id bigint NOT NULL,
  key text NOT NULL,
  message_id bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, key)
);
