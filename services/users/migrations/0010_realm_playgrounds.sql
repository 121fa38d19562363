-- Zulip's RealmPlayground (FL 49): where the web app opens a code block of a language.
-- At our feature level a playground has a URL prefix the code is appended to (url_template is FL 196).
CREATE TABLE users.realm_playground (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  realm_id bigint NOT NULL REFERENCES users.realm(id),
  name text NOT NULL,
  pygments_language text NOT NULL,
  url_prefix text NOT NULL,
  UNIQUE (realm_id, pygments_language, name)
);
