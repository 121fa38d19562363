-- Zulip's RealmUserDefault: the settings a new user of the realm starts with (only those an
-- administrator changed; the rest are the server's defaults).
ALTER TABLE users.realm ADD COLUMN user_settings_defaults jsonb NOT NULL DEFAULT '{}';
