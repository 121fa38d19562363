-- Custom profile fields: Zulip keeps labels unique within a realm ("A field with that label
-- already exists."); `required` and `editable_by_user` are carried for clients of later levels.
ALTER TABLE users.custom_profile_field
  ADD COLUMN required boolean NOT NULL DEFAULT false,
  ADD COLUMN editable_by_user boolean NOT NULL DEFAULT true;
CREATE UNIQUE INDEX custom_profile_field_realm_name ON users.custom_profile_field (realm_id, name);

-- POST /users/me/status. A row exists once a user has set a status; cleared fields are ''.
CREATE TABLE users.user_status (
  user_id bigint PRIMARY KEY REFERENCES users.user_profile(id),
  status_text text NOT NULL DEFAULT '',
  emoji_name text NOT NULL DEFAULT '',
  emoji_code text NOT NULL DEFAULT '',
  reaction_type text NOT NULL DEFAULT 'unicode_emoji',
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- /bot_storage: a user's (normally a bot's) key/value pairs, limited in total size.
CREATE TABLE users.bot_storage (
  user_id bigint NOT NULL REFERENCES users.user_profile(id),
  key text NOT NULL,
  value text NOT NULL,
  PRIMARY KEY (user_id, key)
);
