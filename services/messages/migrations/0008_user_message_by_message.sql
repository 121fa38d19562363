-- Who received a message (read receipts, a topic's deletion, edits' recipients) is looked up by
-- message; the primary key leads with the user, so without this every such lookup reads the
-- whole table (Zulip indexes UserMessage.message_id for the same reasons).
CREATE INDEX IF NOT EXISTS user_message_by_message ON messages.user_message (message_id);
