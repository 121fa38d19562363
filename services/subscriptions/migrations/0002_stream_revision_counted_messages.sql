-- Every change of a stream's row bumps its revision; read models elsewhere keep the record
-- with the highest revision, so a late event cannot undo a newer synchronous update.
ALTER TABLE subscriptions.stream ADD COLUMN revision bigint NOT NULL DEFAULT 0;

-- Messages already counted in stream_daily_traffic: a redelivered message.sent event (the
-- consumer stopped between commit and acknowledgement) is not counted twice. Pruned with
-- the daily counts.
CREATE TABLE subscriptions.counted_message (
  message_id bigint PRIMARY KEY,
  day date NOT NULL
);
CREATE INDEX counted_message_day ON subscriptions.counted_message (day);
