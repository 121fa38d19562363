/**
 * Inline previews of uploaded images. Which uploads are thumbnailed images belongs to the
 * uploads service; it is asked for the uploads a message links (only messages that link one),
 * with no read model in between: an image uploaded a moment ago must preview in the message
 * sent right after (read your writes). If the owner does not answer, the message renders
 * without those previews rather than failing.
 */
import type { RenderContext, UploadedImagePreview } from '@zc/markdown';
import { DEFAULT_THUMBNAIL_FORMAT, uploads } from '@zc/shared/contracts';
import type { MessagesDeps } from '../deps.js';
import { renderContent, type Rendered } from '../lib/render.js';

const OWNER_TIMEOUT_MS = 2000;

/** The thumbnailed images among a realm's uploads with these path ids, by path id. */
async function uploadedImages(deps: MessagesDeps, realmId: number, pathIds: readonly string[]): Promise<Map<string, UploadedImagePreview>> {
  try {
    const { images } = await deps.bus.request(uploads.uploadedImages, { realm_id: realmId, path_ids: [...pathIds] }, { timeoutMs: OWNER_TIMEOUT_MS });
    return new Map(
      images.map((i) => [
        i.path_id,
        { width: i.original_width, height: i.original_height, animated: i.animated, thumbnailUrl: `/user_uploads/thumbnail/${i.path_id}/${DEFAULT_THUMBNAIL_FORMAT}` },
      ]),
    );
  } catch (err) {
    deps.log.warn({ err, realm_id: realmId }, 'uploads service did not say which uploads are images; rendering without their previews');
    return new Map();
  }
}

/**
 * Renders `content`; when it links uploads (and previews are on), renders it again knowing
 * which of them are images. The first rendering finds the links exactly as the renderer reads
 * them, which a scan of the source could not; only messages linking uploads pay for it.
 */
export async function renderWithUploadPreviews(deps: MessagesDeps, realmId: number, content: string, ctx: RenderContext): Promise<Rendered> {
  const rendered = renderContent(content, ctx);
  if (rendered.attachment_path_ids.length === 0 || ctx.inlineImagePreview === false) return rendered;
  const images = await uploadedImages(deps, realmId, rendered.attachment_path_ids);
  if (images.size === 0) return rendered;
  return renderContent(content, { ...ctx, uploadedImages: { byPathId: (pathId) => images.get(pathId) } });
}
