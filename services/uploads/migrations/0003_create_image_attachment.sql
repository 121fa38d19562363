-- Uploaded images that were thumbnailed (Zulip's ImageAttachment): their original size and
-- frame count, and the thumbnail formats stored under `thumbnail/<path_id>/<format>`. An
-- upload without a row here is not an image we preview (not decodable, or over the pixel
-- limit), as in Zulip.
CREATE TABLE uploads.image_attachment (
  attachment_id bigint PRIMARY KEY REFERENCES uploads.attachment (id) ON DELETE CASCADE,
  original_width integer NOT NULL CHECK (original_width > 0),
  original_height integer NOT NULL CHECK (original_height > 0),
  frames integer NOT NULL CHECK (frames > 0),
  thumbnail_formats text[] NOT NULL
);
