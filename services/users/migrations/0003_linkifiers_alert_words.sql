CREATE TABLE users.linkifier (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  realm_id bigint NOT NULL REFERENCES users.realm(id),
  pattern text NOT NULL,
  url_template text NOT NULL,
  -- Processing order within the realm (Zulip's PATCH /realm/linkifiers reorders it).
  "order" integer NOT NULL DEFAULT 0,
  UNIQUE (realm_id, pattern)
);

CREATE TABLE users.alert_word (
  user_id bigint NOT NULL REFERENCES users.user_profile(id),
  realm_id bigint NOT NULL REFERENCES users.realm(id),
  word text NOT NULL
);
-- Alert words are case-insensitive (Zulip); the spelling first given is kept.
CREATE UNIQUE INDEX alert_word_user_word ON users.alert_word (user_id, lower(word));
