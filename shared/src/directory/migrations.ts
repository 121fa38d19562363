/**
 * The directory's tables, created in each using service's own schema (db/MigrationLibrary
 * runs them with that schema as search_path). Written to also bring tables an older version
 * of a service created itself to this shape, so every step is idempotent.
 */
import type { MigrationLibrary } from '../db/index.js';

const TABLES = `
-- Realms as the users service publishes them. A row exists only once the whole realm was
-- loaded from a snapshot (users.realm_snapshot), so "every user of the realm" is complete.
CREATE TABLE IF NOT EXISTS realm (
  id bigint PRIMARY KEY,
  subdomain text NOT NULL DEFAULT '',
  url text NOT NULL,
  settings jsonb NOT NULL DEFAULT '{}',
  deactivated boolean NOT NULL DEFAULT false
);
ALTER TABLE realm ADD COLUMN IF NOT EXISTS subdomain text NOT NULL DEFAULT '';
ALTER TABLE realm ADD COLUMN IF NOT EXISTS deactivated boolean NOT NULL DEFAULT false;

CREATE TABLE IF NOT EXISTS user_account (
  id bigint PRIMARY KEY,
  realm_id bigint NOT NULL,
  -- Display email (what other users see) and the real address.
  email text NOT NULL,
  delivery_email text NOT NULL,
  full_name text NOT NULL,
  role integer NOT NULL,
  is_active boolean NOT NULL,
  is_bot boolean NOT NULL,
  -- The notification bot and its kind: a user, but nobody's peer (never among "everyone").
  is_system_bot boolean NOT NULL DEFAULT false,
  bot_owner_id bigint,
  avatar_source text NOT NULL DEFAULT 'G',
  avatar_version integer NOT NULL DEFAULT 1,
  date_joined timestamptz NOT NULL
);
ALTER TABLE user_account ADD COLUMN IF NOT EXISTS is_system_bot boolean NOT NULL DEFAULT false;
ALTER TABLE user_account ADD COLUMN IF NOT EXISTS avatar_source text NOT NULL DEFAULT 'G';
ALTER TABLE user_account ADD COLUMN IF NOT EXISTS avatar_version integer NOT NULL DEFAULT 1;
CREATE INDEX IF NOT EXISTS user_account_realm ON user_account (realm_id);
CREATE INDEX IF NOT EXISTS user_account_email ON user_account (realm_id, lower(email));
CREATE INDEX IF NOT EXISTS user_account_delivery_email ON user_account (realm_id, lower(delivery_email));
`;

// User groups as the users service publishes them (userGroupEvents.changed, whole groups).
// A system group's members are given by roles (policy/directMembers), so it has no rows in
// user_group_member.
const GROUPS = `
CREATE TABLE user_group (
  id bigint PRIMARY KEY,
  realm_id bigint NOT NULL,
  name text NOT NULL,
  is_system_group boolean NOT NULL
);
CREATE INDEX user_group_realm ON user_group (realm_id);
CREATE TABLE user_group_member (
  group_id bigint NOT NULL REFERENCES user_group(id) ON DELETE CASCADE,
  user_id bigint NOT NULL,
  PRIMARY KEY (group_id, user_id)
);
CREATE TABLE user_group_subgroup (
  group_id bigint NOT NULL REFERENCES user_group(id) ON DELETE CASCADE,
  subgroup_id bigint NOT NULL,
  PRIMARY KEY (group_id, subgroup_id)
);
`;

export const DIRECTORY_MIGRATIONS: MigrationLibrary = {
  name: 'directory',
  migrations: [
    { version: '0001_realm_user_account', sql: TABLES },
    { version: '0002_user_groups', sql: GROUPS },
    // The users service's change counter of the realm (RealmRecord.revision); see Directory.realmFor.
    { version: '0003_realm_revision', sql: 'ALTER TABLE realm ADD COLUMN IF NOT EXISTS revision integer NOT NULL DEFAULT 0;' },
  ],
};
