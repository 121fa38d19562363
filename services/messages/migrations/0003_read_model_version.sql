-- A per-realm counter of read-model changes (realm, users, streams, subscribers), bumped by
-- every statement of store/read-model-store.ts that writes them, in the same transaction and
-- before it touches any other row. The send path keeps what it read from the read models in
-- memory and its write statement only commits when the realm's counter still has the value
-- the checks were made against (actions/send-context.ts). Being a row update, a bump becomes
-- visible exactly when the change it announces does (a sequence would not: nextval is not
-- transactional). A realm without a row has version 0.
CREATE TABLE messages.read_model_version (
  realm_id bigint PRIMARY KEY,
  version bigint NOT NULL
);
