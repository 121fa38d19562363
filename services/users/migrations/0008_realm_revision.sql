-- Counts the changes to what a realm record carries (settings, name, deactivation). Actors
-- carry the revision they were authenticated at, so a service whose copy of the realm is older
-- than the request's fetches the realm before deciding by its policies (read-your-writes for
-- PATCH /realm; shared/src/directory).
ALTER TABLE users.realm ADD COLUMN revision integer NOT NULL DEFAULT 0;
