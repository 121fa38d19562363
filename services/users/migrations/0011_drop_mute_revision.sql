-- Mute changes are ordered by the clock (store/muted-user-store.ts revisionNow): a sequence
-- starts again at 1 on a server a realm is imported into, below the imported revisions.
DROP SEQUENCE users.mute_revision;
