-- When the draft was first stored (the storing transaction's start). Turning
-- enable_drafts_synchronization off deletes the drafts stored before that instant, and only
-- those: a draft stored after the user turned it on again stays.
ALTER TABLE drafts.draft ADD COLUMN created_at timestamptz NOT NULL DEFAULT now();
