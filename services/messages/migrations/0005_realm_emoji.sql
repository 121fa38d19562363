-- Read model of the realm's custom emoji (owned by the uploads service), fed by
-- uploads.evt.v1.realm_emoji.changed and by the owner's answers (uploads.v1.find_emoji).
-- An id's name and image never change and deactivation is final, so merging two versions of
-- a row is "deactivated if either says so": the order they arrive in does not matter.
CREATE TABLE messages.realm_emoji (
  id bigint PRIMARY KEY,
  realm_id bigint NOT NULL,
  name text NOT NULL,
  source_url text NOT NULL,
  still_url text,
  deactivated boolean NOT NULL,
  author_id bigint
);
CREATE INDEX realm_emoji_realm_name ON messages.realm_emoji (realm_id, name);
