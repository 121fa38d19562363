-- Zulip's MutedUser: whom a user has muted, and since when (the /register timestamp).
CREATE TABLE users.muted_user (
  user_id bigint NOT NULL REFERENCES users.user_profile(id),
  muted_user_id bigint NOT NULL REFERENCES users.user_profile(id),
  realm_id bigint NOT NULL REFERENCES users.realm(id),
  date_muted timestamptz NOT NULL,
  PRIMARY KEY (user_id, muted_user_id)
);
-- Orders the mute changes of a pair for the messages service's read model, which hears them
-- both synchronously and by event (a late event must not undo a newer change).
CREATE SEQUENCE users.mute_revision;
