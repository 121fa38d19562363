-- The latest change of each message's links applied (MessageAttachmentsChanged.version): the
-- messages service pushes a change before answering and sends it again as an event, so one
-- arrives second, sometimes after a newer change; it must not undo that one. Kept after a
-- message's deletion (its version is then final), so a late event cannot link it again.
CREATE TABLE uploads.message_link_version (
  message_id bigint PRIMARY KEY,
  realm_id bigint NOT NULL,
  version integer NOT NULL
);
CREATE INDEX message_link_version_realm_idx ON uploads.message_link_version (realm_id);
