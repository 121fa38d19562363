-- Submessages (POST /submessage): what readers add to a widget message (poll votes and
-- options, todo tasks). A widget's own first submessage is not stored (lib/widget.ts). Ids
-- come from the message id sequence, so each is above its message's id (which the widget's
-- first submessage carries) and clients, which sort a message's submessages by id, see the
-- widget first; drawing one only leaves a gap between message ids.
CREATE TABLE messages.submessage (
  id bigint PRIMARY KEY DEFAULT nextval('messages.message_id_seq'),
  message_id bigint NOT NULL,
  sender_id bigint NOT NULL,
  msg_type text NOT NULL,
  content text NOT NULL
);
CREATE INDEX submessage_message_id ON messages.submessage (message_id, id);
