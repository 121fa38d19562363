/**
 * Uploads (issue 11): throughput of uploading and downloading one 10 MB file through the
 * gateway (POST /api/v1/user_uploads, GET /user_uploads/...), one at a time, and the memory of
 * the uploads service and of the gateway while 20 such uploads run at once (bodies stream
 * through both to storage, so RSS should grow by a few buffers each, not by 10 MB each). Then the same with a JPEG photo of
 * about that size, which the uploads service thumbnails before answering (two at a time per
 * replica, each read whole): the upload time that costs, and the memory 20 at once take.
 *
 *   npm run bench -- uploads-10mb [--opt rounds=5 --opt concurrent=20 --opt mb=10]
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import sharp from 'sharp';
import { request } from 'undici';
import { multipart } from '../e2e/uploads-support.js';
import { basicAuth } from './load.js';
import { defineScenario, type BenchAccount, type Scenario } from './scenario.js';

/** RSS in MB of the bench system's uploads process (a grandchild of this process in the processes layout, else the system process). */
function uploadsRssMb(): number | undefined {
  return serviceProcess('uploads')?.rssMb;
}

/** The gateway streams every byte too (client to uploads replica and back): its RSS alongside. */
function gatewayRssMb(): number | undefined {
  return serviceProcess('gateway')?.rssMb;
}

function uploadsProcess() {
  return serviceProcess('uploads');
}

function serviceProcess(service: 'uploads' | 'gateway'): { pid: number; rssMb: number; which: string } | undefined {
  const procs = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .flatMap((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
        const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        return [{ pid: Number(pid), ppid, rssMb: rss ? Number(rss[1]) / 1024 : 0, cmd }];
      } catch {
        return [];
      }
    });
  const root = procs.find((p) => p.ppid === process.pid && p.cmd.includes('system-child'));
  if (!root) return undefined;
  const found = procs.find((p) => p.ppid === root.pid && p.cmd.includes(`services/${service}/dist/main.js`));
  return found ? { ...found, which: `the ${service} service process` } : { ...root, which: 'the whole system process (inprocess layout)' };
}

async function uploadOnce(baseUrl: string, who: BenchAccount, body: Buffer, contentType: string): Promise<string> {
  const res = await request(`${baseUrl}/api/v1/user_uploads`, { method: 'POST', headers: { authorization: basicAuth(who), 'content-type': contentType }, body });
  const answer = (await res.body.json()) as { uri?: string; msg?: string };
  if (res.statusCode !== 200 || !answer.uri) throw new Error(`upload failed: ${res.statusCode} ${answer.msg ?? ''}`);
  return answer.uri;
}

async function downloadOnce(baseUrl: string, who: BenchAccount, uri: string): Promise<number> {
  const res = await request(`${baseUrl}${uri}`, { headers: { authorization: basicAuth(who) } });
  let bytes = 0;
  for await (const chunk of res.body) bytes += (chunk as Buffer).length;
  if (res.statusCode !== 200) throw new Error(`download failed: ${res.statusCode}`);
  return bytes;
}

const uploads10mb = defineScenario<undefined>({
  name: 'uploads-10mb',
  description: 'upload and download throughput of a 10 MB file, and the uploads process RSS while 20 upload at once',
  default: false,
  async run(ctx) {
    const me = ctx.sys.people.hamlet ?? ctx.sys.admin;
    const base = ctx.sys.baseUrl;
    const rounds = Number(ctx.options.extra.rounds ?? 5);
    const concurrent = Number(ctx.options.extra.concurrent ?? 20);
    const mb = Number(ctx.options.extra.mb ?? 10);
    const { body, contentType } = multipart([{ filename: 'bench.bin', data: randomBytes(mb * 1024 * 1024) }]);
    const bytes = mb * 1024 * 1024;

    let uri = await uploadOnce(base, me, body, contentType); // warm-up
    let t0 = performance.now();
    for (let i = 0; i < rounds; i++) uri = await uploadOnce(base, me, body, contentType);
    const uploadSeconds = (performance.now() - t0) / 1000;
    t0 = performance.now();
    for (let i = 0; i < rounds; i++) await downloadOnce(base, me, uri);
    const downloadSeconds = (performance.now() - t0) / 1000;
    ctx.log(`uploads: ${rounds} x ${mb} MB up in ${uploadSeconds.toFixed(2)} s, down in ${downloadSeconds.toFixed(2)} s`);

    const idleRss = uploadsRssMb() ?? 0;
    const gatewayIdleRss = gatewayRssMb() ?? 0;
    ctx.log(`uploads: RSS of ${uploadsProcess()?.which ?? 'nothing found'} (pid ${uploadsProcess()?.pid ?? '?'})`);
    let peakRss = idleRss;
    let gatewayPeakRss = gatewayIdleRss;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, uploadsRssMb() ?? 0);
      gatewayPeakRss = Math.max(gatewayPeakRss, gatewayRssMb() ?? 0);
    }, 50);
    t0 = performance.now();
    await Promise.all(Array.from({ length: concurrent }, () => uploadOnce(base, me, body, contentType)));
    const concurrentSeconds = (performance.now() - t0) / 1000;
    clearInterval(sampler);
    peakRss = Math.max(peakRss, uploadsRssMb() ?? 0);
    ctx.log(`uploads: ${concurrent} at once in ${concurrentSeconds.toFixed(2)} s; uploads RSS ${idleRss.toFixed(0)} -> ${peakRss.toFixed(0)} MB, gateway RSS ${gatewayIdleRss.toFixed(0)} -> ${gatewayPeakRss.toFixed(0)} MB`);

    // A noise photo of about `mb` MB (noise barely compresses: about 1 MB per megapixel at quality 95).
    const width = Math.round(Math.sqrt(mb * 1.05e6 * 1.5));
    const photo = await sharp(randomBytes(width * Math.round(width / 1.5) * 3), { raw: { width, height: Math.round(width / 1.5), channels: 3 } }).jpeg({ quality: 95 }).toBuffer();
    const image = multipart([{ filename: 'bench.jpg', contentType: 'image/jpeg', data: photo }]);
    const photoMb = photo.length / (1024 * 1024);
    await uploadOnce(base, me, image.body, image.contentType); // warm-up
    t0 = performance.now();
    for (let i = 0; i < rounds; i++) await uploadOnce(base, me, image.body, image.contentType);
    const photoSeconds = (performance.now() - t0) / 1000 / rounds;
    const photoIdleRss = uploadsRssMb() ?? 0;
    let photoPeakRss = photoIdleRss;
    const photoSampler = setInterval(() => {
      photoPeakRss = Math.max(photoPeakRss, uploadsRssMb() ?? 0);
    }, 50);
    t0 = performance.now();
    await Promise.all(Array.from({ length: concurrent }, () => uploadOnce(base, me, image.body, image.contentType)));
    const photosConcurrentSeconds = (performance.now() - t0) / 1000;
    clearInterval(photoSampler);
    photoPeakRss = Math.max(photoPeakRss, uploadsRssMb() ?? 0);
    ctx.log(
      `uploads: a ${photoMb.toFixed(1)} MB ${width}x${Math.round(width / 1.5)} photo uploads and thumbnails in ${(photoSeconds * 1000).toFixed(0)} ms; ` +
        `${concurrent} at once in ${photosConcurrentSeconds.toFixed(2)} s; uploads RSS ${photoIdleRss.toFixed(0)} -> ${photoPeakRss.toFixed(0)} MB`,
    );

    const mbps = (seconds: number, n: number) => (n * bytes) / (1024 * 1024) / seconds;
    return {
      headlines: [
        { label: `upload ${mb} MB, one at a time`, value: Math.round(mbps(uploadSeconds, rounds)), unit: 'MB/s' },
        { label: `download ${mb} MB, one at a time`, value: Math.round(mbps(downloadSeconds, rounds)), unit: 'MB/s' },
        { label: `${concurrent} uploads at once`, value: Math.round(mbps(concurrentSeconds, concurrent)), unit: 'MB/s' },
        { label: 'uploads RSS idle', value: Math.round(idleRss), unit: 'MB' },
        { label: `uploads RSS peak, ${concurrent} at once`, value: Math.round(peakRss), unit: 'MB' },
        { label: 'gateway RSS idle', value: Math.round(gatewayIdleRss), unit: 'MB' },
        { label: `gateway RSS peak, ${concurrent} at once`, value: Math.round(gatewayPeakRss), unit: 'MB' },
        { label: `photo of ${photoMb.toFixed(0)} MB uploaded and thumbnailed`, value: Math.round(photoSeconds * 1000), unit: 'ms' },
        { label: `${concurrent} photos at once`, value: Math.round(photosConcurrentSeconds * 1000), unit: 'ms' },
        { label: `uploads RSS peak, ${concurrent} photos at once`, value: Math.round(photoPeakRss), unit: 'MB' },
      ],
      details: {
        rounds, concurrent, mb, uploadSeconds, downloadSeconds, concurrentSeconds, idleRssMb: idleRss, peakRssMb: peakRss, gatewayIdleRssMb: gatewayIdleRss, gatewayPeakRssMb: gatewayPeakRss,
        photoBytes: photo.length, photoWidth: width, photoSeconds, photosConcurrentSeconds, photoIdleRssMb: photoIdleRss, photoPeakRssMb: photoPeakRss,
      },
    };
  },
});

export const scenarios: Scenario[] = [uploads10mb];
