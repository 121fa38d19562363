-- System bots (the notification bot) belong to a realm here but are listed as cross-realm bots,
-- as Zulip shows them, not among the realm's members.
ALTER TABLE users.user_profile ADD COLUMN is_system_bot boolean NOT NULL DEFAULT false;
