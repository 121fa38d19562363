-- A user's message drafts (spec 2.7). `to_ids` holds the stream id of a stream draft, or the
-- other users of a direct-message draft; an unaddressed draft has type '' and no recipients.
CREATE TABLE drafts.draft (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  realm_id bigint NOT NULL,
  user_id bigint NOT NULL,
  type text NOT NULL CHECK (type IN ('', 'stream', 'private')),
  to_ids bigint[] NOT NULL DEFAULT '{}',
  topic text NOT NULL DEFAULT '',
  content text NOT NULL,
  last_edit_time timestamptz NOT NULL
);

-- GET /drafts lists a user's drafts, most recently edited first.
CREATE INDEX draft_user_last_edit_idx ON drafts.draft (user_id, last_edit_time DESC, id DESC);
