-- Until when the realm's members who passed the waiting period have been announced as joining
-- role:fullmembers (actions/full-members.ts). It is also the clock role:fullmembers is counted
-- with, so what /register shows and what the events announce agree.
ALTER TABLE users.realm ADD COLUMN full_members_swept_at timestamptz NOT NULL DEFAULT now();
