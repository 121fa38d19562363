-- Emoji reactions (spec 2.4). One row per user, message and emoji: the same emoji from two
-- users is two rows (clients count them as votes). emoji_code identifies the emoji within
-- its reaction_type (unicode code points, a realm emoji id, or 'zulip'). `id` only orders
-- a message's reactions as they were added, as Zulip lists them.
CREATE TABLE messages.reaction (
  id bigint GENERATED ALWAYS AS IDENTITY,
  message_id bigint NOT NULL,
  user_id bigint NOT NULL,
  reaction_type text NOT NULL,
  emoji_code text NOT NULL,
  emoji_name text NOT NULL,
  PRIMARY KEY (message_id, user_id, reaction_type, emoji_code)
);
