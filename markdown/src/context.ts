// What the renderer needs from the outside world, as plain data and lookups,
// and what it reports back. No I/O happens through these: callers preload.

/** A realm linkifier row, as Zulip stores and sends it. */
export interface Linkifier {
  id: number;
  pattern: string;
  url_template: string;
}

export interface MentionUser {
  id: number;
  full_name: string;
  /** A deactivated user's mention renders, but silently (no notification). Default true. */
  is_active?: boolean;
}

export interface MentionGroup {
  id: number;
  name: string;
  /** A deactivated group's mention renders, but silently (no notification). */
  deactivated?: boolean;
}

export interface StreamRef {
  id: number;
  name: string;
}

export interface RealmEmoji {
  name: string;
  source_url: string;
  deactivated?: boolean;
}

/** An uploaded image that has thumbnails (Zulip's ImageAttachment), as its inline preview shows it. */
export interface UploadedImagePreview {
  /** The original's size, for the preview's `data-original-dimensions`. */
  width: number;
  height: number;
  animated: boolean;
  /** The `src` of the preview: the default thumbnail, below /user_uploads/thumbnail/. */
  thumbnailUrl: string;
}

export interface RenderContext {
  /** The realm's URL without a trailing slash, e.g. `https://chat.example.com`. */
  realmUrl: string;
  /** Realm linkifiers, applied in this order. */
  linkifiers?: readonly Linkifier[];
  users?: {
    /** Case-insensitive full-name lookup; return undefined when the name is ambiguous. */
    byFullName(name: string): MentionUser | undefined;
    byId(id: number): MentionUser | undefined;
  };
  userGroups?: { byName(name: string): MentionGroup | undefined };
  streams?: { byName(name: string): StreamRef | undefined };
  realmEmoji?: { byName(name: string): RealmEmoji | undefined };
  /** The sender's "translate emoticons" setting (`:)` becomes :smile:). */
  translateEmoticons?: boolean;
  /** Alert words to look for (any user's), reported in `alert_words_found`. */
  alertWords?: readonly string[];
  /**
   * The realm's uploaded images that have thumbnails, by path id (the part after /user_uploads/).
   * A link to an upload gets an inline preview only when it is one of these: Zulip previews
   * uploads by what they are, not by their names. Without it, links to uploads get none.
   */
  uploadedImages?: { byPathId(pathId: string): UploadedImagePreview | undefined };
  /** The realm's inline image preview setting; default true. */
  inlineImagePreview?: boolean;
  /**
   * Camo-style image proxy for external preview images: the `src` becomes
   * `url` + hex(HMAC-SHA1(key, image URL)) + `/` + hex(image URL).
   */
  imageProxy?: { url: string; key: string };
  /** The realm's default language for code blocks that name none. */
  defaultCodeBlockLanguage?: string;
}

export interface RenderResult {
  html: string;
  /** Users who get a (non-silent) mention notification. */
  mentioned_user_ids: number[];
  mentioned_group_ids: number[];
  /** `@**all**`/`@**everyone**`/`@**stream**`/`@**channel**` → 'stream'; `@**topic**` → 'topic'. */
  wildcard_mention: 'stream' | 'topic' | null;
  mentions_stream_wildcard: boolean;
  mentions_topic_wildcard: boolean;
  has_link: boolean;
  has_image: boolean;
  has_attachment: boolean;
  /** Paths below `/user_uploads/` that the message links to (for attachment claiming). */
  attachment_path_ids: string[];
  is_me_message: boolean;
  /** The context's alert words that occur in the message (lower-cased). */
  alert_words_found: string[];
  /** Every link target in the rendered message, in order, without duplicates. */
  links: string[];
}
