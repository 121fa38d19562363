-- When the user last turned enable_drafts_synchronization off: Zulip deletes the user's drafts
-- then, and the drafts service deletes every draft it stored before this instant.
ALTER TABLE users.user_profile ADD COLUMN drafts_cleared_at timestamptz;
