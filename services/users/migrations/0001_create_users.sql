CREATE TABLE users.realm (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  subdomain text NOT NULL UNIQUE,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  deactivated boolean NOT NULL DEFAULT false,
  -- 1 everyone, 2 members, 3 administrators, 4 nobody, 5 moderators (Zulip's numbering)
  email_address_visibility integer NOT NULL DEFAULT 1,
  settings jsonb NOT NULL DEFAULT '{}',
  date_created timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users.user_profile (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  realm_id bigint NOT NULL REFERENCES users.realm(id),
  delivery_email text NOT NULL,
  full_name text NOT NULL,
  role integer NOT NULL DEFAULT 400,
  is_active boolean NOT NULL DEFAULT true,
  is_bot boolean NOT NULL DEFAULT false,
  bot_type integer,
  bot_owner_id bigint REFERENCES users.user_profile(id),
  timezone text NOT NULL DEFAULT '',
  avatar_source text NOT NULL DEFAULT 'G',
  avatar_version integer NOT NULL DEFAULT 1,
  date_joined timestamptz NOT NULL DEFAULT now(),
  password_hash text,
  -- HMAC-SHA256 of the key under the server secret: lookups never see the key itself.
  api_key_hash bytea NOT NULL UNIQUE,
  -- AES-256-GCM of the key, so fetch_api_key can return it.
  api_key_enc bytea NOT NULL,
  can_create_users boolean NOT NULL DEFAULT false,
  settings jsonb NOT NULL DEFAULT '{}'
);
CREATE UNIQUE INDEX user_profile_realm_email ON users.user_profile (realm_id, lower(delivery_email));

CREATE TABLE users.custom_profile_field (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  realm_id bigint NOT NULL REFERENCES users.realm(id),
  name text NOT NULL,
  hint text NOT NULL DEFAULT '',
  field_type integer NOT NULL,
  field_data text NOT NULL DEFAULT '',
  display_in_profile_summary boolean NOT NULL DEFAULT false,
  "order" integer NOT NULL DEFAULT 0
);

CREATE TABLE users.custom_profile_field_value (
  user_id bigint NOT NULL REFERENCES users.user_profile(id),
  field_id bigint NOT NULL REFERENCES users.custom_profile_field(id) ON DELETE CASCADE,
  value text NOT NULL,
  rendered_value text,
  PRIMARY KEY (user_id, field_id)
);
