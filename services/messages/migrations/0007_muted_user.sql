-- Read model of the users service's muted users: a muted sender's new messages arrive read for
-- the muter. Unmuted pairs stay as rows (muted = false) so that the revision of the latest
-- change is kept: a late event or push never undoes a newer change.
CREATE TABLE messages.muted_user (
  user_id bigint NOT NULL,
  muted_user_id bigint NOT NULL,
  realm_id bigint NOT NULL,
  muted boolean NOT NULL,
  revision bigint NOT NULL,
  PRIMARY KEY (user_id, muted_user_id)
);
-- The send path asks who muted a sender.
CREATE INDEX muted_user_by_sender ON messages.muted_user (muted_user_id) WHERE muted;
