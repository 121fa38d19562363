-- Uploaded files (Zulip's Attachment). `path_id` is the object's key in storage and the part
-- of its URL after /user_uploads/: `<realm_id>/<2 hex>/<24 random>/<sanitised name>`.
CREATE TABLE uploads.attachment (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  realm_id bigint NOT NULL,
  owner_id bigint NOT NULL,
  path_id text NOT NULL UNIQUE,
  file_name text NOT NULL,
  content_type text NOT NULL,
  size bigint NOT NULL CHECK (size >= 0),
  create_time timestamptz NOT NULL DEFAULT now()
);

-- GET /attachments lists a user's own uploads, newest first.
CREATE INDEX attachment_owner_idx ON uploads.attachment (owner_id, id DESC);
-- upload_space_used and the quota add up a realm's sizes.
CREATE INDEX attachment_realm_idx ON uploads.attachment (realm_id);

-- Which messages link which attachment (Zulip's Attachment.messages), fed by the messages
-- service's attachments_changed events. `date_sent` is kept for GET /attachments.
CREATE TABLE uploads.attachment_message (
  attachment_id bigint NOT NULL REFERENCES uploads.attachment (id) ON DELETE CASCADE,
  message_id bigint NOT NULL,
  date_sent timestamptz NOT NULL,
  PRIMARY KEY (attachment_id, message_id)
);
CREATE INDEX attachment_message_message_idx ON uploads.attachment_message (message_id);
