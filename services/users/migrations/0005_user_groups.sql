-- User groups with subgroups (spec 4.19). A realm's system groups (role:internet …
-- role:nobody) have the fixed ids realm_id * 8 + position (@zc/shared/policy, systemGroupId);
-- their members follow from roles and are not stored. Other groups take ids from
-- user_group_id_seq, which starts above every realm's block.
CREATE SEQUENCE users.user_group_id_seq START WITH 1000000000;

CREATE TABLE users.user_group (
  id bigint PRIMARY KEY DEFAULT nextval('users.user_group_id_seq'),
  realm_id bigint NOT NULL REFERENCES users.realm(id),
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  is_system_group boolean NOT NULL DEFAULT false,
  date_created timestamptz NOT NULL DEFAULT now(),
  creator_id bigint
);
CREATE UNIQUE INDEX user_group_realm_name ON users.user_group (realm_id, name);

CREATE TABLE users.user_group_member (
  group_id bigint NOT NULL REFERENCES users.user_group(id) ON DELETE CASCADE,
  user_id bigint NOT NULL REFERENCES users.user_profile(id),
  PRIMARY KEY (group_id, user_id)
);
CREATE INDEX user_group_member_user ON users.user_group_member (user_id);

CREATE TABLE users.user_group_subgroup (
  group_id bigint NOT NULL REFERENCES users.user_group(id) ON DELETE CASCADE,
  subgroup_id bigint NOT NULL REFERENCES users.user_group(id) ON DELETE CASCADE,
  PRIMARY KEY (group_id, subgroup_id)
);
CREATE INDEX user_group_subgroup_sub ON users.user_group_subgroup (subgroup_id);
