-- The subscriptions service's revision of each stream row (StreamRecord.revision): an
-- event older than the row stored (by messages.v1.sync_stream or an owner's answer) is
-- not applied over it.
ALTER TABLE messages.stream ADD COLUMN revision bigint NOT NULL DEFAULT 0;
