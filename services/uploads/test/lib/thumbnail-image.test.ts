import sharp from 'sharp';
import t from 'tap';
import { THUMBNAIL_FORMATS } from '@zc/shared/contracts';
import { ConcurrencyLimit } from '../../src/lib/concurrency-limit.js';
import { makeThumbnails, thumbnailKeys } from '../../src/lib/thumbnail-image.js';

const REFUSED = { name: 'NotThumbnailable' };
const LIMITS = { maxPixels: 4_000_000, timeoutSeconds: 10 };
const solid = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: { r: 10, g: 120, b: 200 } } });

t.test('a still image gets the still format only, fitted inside 840x560', async (t) => {
  const made = await makeThumbnails(await solid(1000, 1000).jpeg().toBuffer(), THUMBNAIL_FORMATS, LIMITS);
  t.match(made, { width: 1000, height: 1000, frames: 1 });
  t.same(made.outputs.map((o) => o.format.name), ['840x560.webp']);
  t.match(await sharp(made.outputs[0]?.image).metadata(), { format: 'webp', width: 560, height: 560 });
});

t.test('EXIF orientation is applied: a sideways photo reports and shows its upright size', async (t) => {
  const photo = await solid(1200, 600).jpeg().withMetadata({ orientation: 6 }).toBuffer();
  const made = await makeThumbnails(photo, THUMBNAIL_FORMATS, LIMITS);
  t.match(made, { width: 600, height: 1200 });
  t.match(await sharp(made.outputs[0]?.image).metadata(), { width: 280, height: 560 });
});

t.test('over the pixel limit (every frame counted) or not an image: NotThumbnailable, nothing decoded', async (t) => {
  const big = await solid(2100, 2000).png({ compressionLevel: 9 }).toBuffer();
  await t.rejects(makeThumbnails(big, THUMBNAIL_FORMATS, LIMITS), REFUSED);
  await t.rejects(makeThumbnails(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), THUMBNAIL_FORMATS, LIMITS), REFUSED);
  const truncated = (await solid(100, 100).png().toBuffer()).subarray(0, 60);
  await t.rejects(makeThumbnails(truncated, THUMBNAIL_FORMATS, LIMITS), REFUSED);
});

t.test('thumbnail keys never look like a path id (those start with the realm id)', async (t) => {
  t.same(thumbnailKeys('2/ab/xyz/a.png'), ['thumbnail/2/ab/xyz/a.png/840x560-anim.webp', 'thumbnail/2/ab/xyz/a.png/840x560.webp']);
});

t.test('ConcurrencyLimit runs at most `limit` tasks at once, in arrival order', async (t) => {
  const limit = new ConcurrencyLimit(2);
  let running = 0;
  let peak = 0;
  const order: number[] = [];
  const task = (i: number) => async () => {
    running++;
    peak = Math.max(peak, running);
    await new Promise((r) => setTimeout(r, 5));
    order.push(i);
    running--;
    if (i === 2) throw new Error('fails');
    return i;
  };
  const results = await Promise.allSettled([1, 2, 3, 4, 5].map((i) => limit.run(task(i))));
  t.equal(peak, 2);
  t.same(order, [1, 2, 3, 4, 5]);
  t.same(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled'], 'a failing task frees its slot');
});
