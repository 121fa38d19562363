-- Message edits (spec 2.3, 4.14) and the renderer's read models of the users service's
-- linkifiers and alert words (fed by usersEvents.linkifiersChanged / alertWordsChanged).

-- Edit history entries, newest first (spec 2.3); null until the first edit.
ALTER TABLE messages.message ADD COLUMN edit_history jsonb;
ALTER TABLE messages.message ADD COLUMN last_edit_time timestamptz;

-- The realm's whole ordered linkifier list as the users service last announced it. A realm
-- without a row has not been heard of yet: the renderer asks the users service once.
CREATE TABLE messages.realm_linkifiers (
  realm_id bigint PRIMARY KEY,
  linkifiers jsonb NOT NULL
);

-- A user's alert words (the users service sends the whole list after each change).
CREATE TABLE messages.alert_words (
  user_id bigint PRIMARY KEY,
  realm_id bigint NOT NULL,
  words text[] NOT NULL
);
CREATE INDEX alert_words_realm ON messages.alert_words (realm_id);
