/**
 * Custom emoji end to end (Zulip's /realm/emoji): uploading (name rules, permission, size,
 * images refused, decompression bombs), resizing as Zulip does, GET /realm/emoji, the public
 * images, deactivation and its permission, /register's realm_emoji and the realm_emoji event
 * (apply-events check); every refusal leaves no file behind.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import t, { type Test } from 'tap';
import { startSystem } from '../harness.js';
import { register } from './events-support.js';
import { verifyAction } from './events-verify.js';
import { animatedGif, imageFile, png, postEmoji } from './realm-emoji-support.js';
import { filesUnder, raw } from './uploads-support.js';

t.test('custom emoji', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'zc-emoji-e2e-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const sys = await startSystem(t, { uploads: { storage: { kind: 'local', dir }, maxEmojiFileSizeMib: 1, imageMaxPixels: 4_000_000 } });
  const { iago, desdemona, hamlet, othello, polonius } = sys.people;
  const realm = sys.realmId;
  const red = await png(100, 50);
  const expectError = (t: Test, r: { status: number; json?: Record<string, unknown>; body?: unknown }, status: number, msg: string) => {
    const body = (r.json ?? r.body) as Record<string, unknown>;
    t.equal(r.status, status, msg);
    t.match(body, { result: 'error', msg, code: 'BAD_REQUEST' });
  };

  t.test('GET /realm/emoji of a realm without custom emoji', async (t) => {
    const r = await sys.client(hamlet).get('/realm/emoji');
    t.equal(r.status, 200);
    t.same(r.body.emoji, {});
  });

  let greenTickId = '';
  t.test('a member uploads an emoji: resized to 64x64, listed, announced to everyone', async (t) => {
    const events = await verifyAction(t, sys, sys.client(othello), () => postEmoji(sys, hamlet, 'green_tick', [imageFile(red)]).then((r) => t.equal(r.status, 200, JSON.stringify(r.json))), {
      params: { event_types: ['realm_emoji'] },
      expect: ['realm_emoji/update'],
    });
    const list = (await sys.client(hamlet).get('/realm/emoji')).body.emoji as Record<string, Record<string, unknown>>;
    const [entry] = Object.values(list);
    greenTickId = String(entry?.id);
    t.same(entry, {
      id: greenTickId,
      name: 'green_tick',
      source_url: `/user_avatars/${realm}/emoji/images/${greenTickId}.png`,
      still_url: null,
      deactivated: false,
      author_id: hamlet.user_id,
    });
    t.same((events[0] as Record<string, unknown>).realm_emoji, list, 'the event carries the whole set');

    const image = await raw(sys, 'GET', entry?.source_url as string);
    t.equal(image.status, 200, 'served without credentials');
    t.equal(image.headers['content-type'], 'image/png');
    const meta = await sharp(image.body).metadata();
    t.same([meta.width, meta.height, meta.format], [64, 64, 'png'], 'cropped to a 64x64 square');
    t.ok(filesUnder(dir).includes(`avatars/${realm}/emoji/images/${greenTickId}.png.original`), 'the original is kept');
  });

  t.test('an animated emoji stays animated, with a still first frame', async (t) => {
    const r = await postEmoji(sys, hamlet, 'party_parrot', [imageFile(await animatedGif(120, 80), 'dance.gif')]);
    t.equal(r.status, 200, JSON.stringify(r.json));
    const list = (await sys.client(hamlet).get('/realm/emoji')).body.emoji as Record<string, Record<string, unknown>>;
    const e = Object.values(list).find((x) => x.name === 'party_parrot');
    t.match(e?.source_url, new RegExp(`^/user_avatars/${realm}/emoji/images/${String(e?.id)}\\.gif$`));
    t.equal(e?.still_url, `/user_avatars/${realm}/emoji/images/still/${String(e?.id)}.png`);
    const animated = await sharp((await raw(sys, 'GET', e?.source_url as string)).body, { animated: true }).metadata();
    t.same([animated.format, animated.width, animated.pageHeight, animated.pages], ['gif', 64, 64, 3]);
    const still = await sharp((await raw(sys, 'GET', e?.still_url as string)).body).metadata();
    t.same([still.format, still.width, still.height, still.pages ?? 1], ['png', 64, 64, 1]);
  });

  t.test('names: spaces become underscores; Zulip\'s rules and messages', async (t) => {
    t.equal((await postEmoji(sys, hamlet, ' ship it ', [imageFile(red)])).status, 200);
    const names = Object.values((await sys.client(hamlet).get('/realm/emoji')).body.emoji as Record<string, { name: string }>).map((e) => e.name);
    t.ok(names.includes('ship_it'));
    const invalid = 'Emoji names must contain only numbers, lowercase English letters, spaces, dashes, underscores, and periods.';
    for (const bad of ['Capital', 'semi;colon', 'ends_', 'ends.', 'ümlaut']) expectError(t, await postEmoji(sys, hamlet, bad, [imageFile(red)]), 400, invalid);
    expectError(t, await postEmoji(sys, hamlet, ' ', [imageFile(red)]), 400, 'Emoji name is missing');
    expectError(t, await postEmoji(sys, othello, 'green_tick', [imageFile(red)]), 400, 'A custom emoji with this name already exists.');
    expectError(t, await postEmoji(sys, hamlet, 'smile', [imageFile(red)]), 400, 'Only administrators can override default emoji.');
    t.equal((await postEmoji(sys, desdemona, 'smile', [imageFile(red)])).status, 200, 'an administrator may');
  });

  t.test('files: exactly one, an image, within the size and pixel limits; nothing left behind', async (t) => {
    const before = filesUnder(dir);
    expectError(t, await postEmoji(sys, hamlet, 'zc_none', []), 400, 'You must upload exactly one file.');
    expectError(t, await postEmoji(sys, hamlet, 'zc_two', [imageFile(red, 'a.png'), imageFile(red, 'b.png')]), 400, 'You must upload exactly one file.');
    const notMultipart = await sys.client(hamlet).post('/realm/emoji/zc_form', { file: 'x' });
    expectError(t, notMultipart, 400, 'You must upload exactly one file.');
    const text = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    expectError(t, await postEmoji(sys, hamlet, 'zc_svg', [imageFile(text, 'x.svg')]), 400, 'Could not decode image; did you upload an image file?');
    expectError(t, await postEmoji(sys, hamlet, 'zc_broken', [imageFile(red.subarray(0, 40))]), 400, 'Could not decode image; did you upload an image file?');
    const big = Buffer.concat([red, Buffer.alloc(1024 * 1024)]);
    expectError(t, await postEmoji(sys, hamlet, 'zc_big', [imageFile(big)]), 400, 'Uploaded file is larger than the allowed limit of 1 MiB');
    // 5000x5000 pixels in a few kilobytes: refused before it is decoded.
    const bomb = await sharp({ create: { width: 5000, height: 5000, channels: 3, background: { r: 0, g: 0, b: 0 } } }).png({ compressionLevel: 9 }).toBuffer();
    t.ok(bomb.length < 200_000);
    expectError(t, await postEmoji(sys, hamlet, 'zc_bomb', [imageFile(bomb)]), 400, 'Image size exceeds limit.');
    t.same(filesUnder(dir), before, 'no file stays from a refused upload');
    const names = Object.values((await sys.client(hamlet).get('/realm/emoji')).body.emoji as Record<string, { name: string }>).map((e) => e.name);
    for (const n of ['zc_none', 'zc_two', 'zc_form', 'zc_svg', 'zc_broken', 'zc_big', 'zc_bomb']) t.notOk(names.includes(n), `${n} was not added`);
  });

  t.test('permission: guests never; the realm\'s add_custom_emoji_policy', async (t) => {
    expectError(t, await postEmoji(sys, polonius, 'zc_guest', [imageFile(red)]), 400, 'Insufficient permission');
    const admins = await sys.client(iago).patch('/realm', { add_custom_emoji_policy: 2 });
    t.equal(admins.status, 200, JSON.stringify(admins.body));
    await sys.flushOutboxes();
    // The realm change reaches the uploads service's directory by event.
    let r = await postEmoji(sys, hamlet, 'zc_member', [imageFile(red)]);
    for (let i = 0; i < 40 && r.status === 200; i++) {
      await new Promise((res) => setTimeout(res, 50));
      r = await postEmoji(sys, hamlet, `zc_member${i}`, [imageFile(red)]);
    }
    expectError(t, r, 400, 'Insufficient permission');
    t.equal((await postEmoji(sys, desdemona, 'admin_only', [imageFile(red)])).status, 200);
    t.equal((await sys.client(iago).patch('/realm', { add_custom_emoji_policy: 1 })).status, 200);
  });

  t.test('deactivation: the author or an administrator; Zulip\'s errors; images stay', async (t) => {
    expectError(t, await sys.client(hamlet).delete('/realm/emoji/no_such_emoji'), 400, "Emoji 'no_such_emoji' does not exist");
    expectError(t, await sys.client(othello).delete('/realm/emoji/green_tick'), 400, 'Must be an organization administrator or emoji author');
    await verifyAction(t, sys, sys.client(othello), () => sys.client(hamlet).delete('/realm/emoji/green_tick').then((r) => t.equal(r.status, 200, JSON.stringify(r.body))), {
      params: { event_types: ['realm_emoji'] },
      expect: ['realm_emoji/update'],
    });
    expectError(t, await sys.client(hamlet).delete('/realm/emoji/green_tick'), 400, "Emoji 'green_tick' does not exist");
    const list = (await sys.client(hamlet).get('/realm/emoji')).body.emoji as Record<string, Record<string, unknown>>;
    t.equal(list[greenTickId]?.deactivated, true, 'listed as deactivated');
    t.equal((await raw(sys, 'GET', list[greenTickId]?.source_url as string)).status, 200, 'its image still shows in old messages');
    t.equal((await sys.client(desdemona).delete('/realm/emoji/party_parrot')).status, 200, 'an administrator deactivates anyone\'s');
    t.equal((await postEmoji(sys, othello, 'green_tick', [imageFile(red)])).status, 200, 'the name is free again');
  });

  t.test('/register has realm_emoji as GET /realm/emoji has it', async (t) => {
    const state = await register(sys.client(othello), { fetch_event_types: ['realm_emoji'] });
    t.same(state.realm_emoji, (await sys.client(othello).get('/realm/emoji')).body.emoji);
  });

  t.test('image URLs: only an emoji\'s own files', async (t) => {
    for (const p of [
      `/user_avatars/${realm}/emoji/images/999999.png`,
      `/user_avatars/${realm}/emoji/images/${greenTickId}.gif`,
      `/user_avatars/${realm}/emoji/images/still/${greenTickId}.png`,
      `/user_avatars/${realm}/emoji/images/${greenTickId}.png.original`,
      `/user_avatars/${realm}/emoji/images/..%2F..%2F..%2Fetc%2Fpasswd`,
      `/user_avatars/${realm + 1}/emoji/images/${greenTickId}.png`,
    ]) {
      t.equal((await raw(sys, 'GET', p)).status, 404, p);
    }
  });

  t.test('in messages: :name: renders as Zulip renders a realm emoji, from the moment it is added until it is deactivated', async (t) => {
    const to = 'emoji talk';
    t.equal((await sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: to }], principals: [hamlet.user_id, othello.user_id] })).status, 200);
    const send = async (content: string) => {
      const r = await sys.client(othello).post('/messages', { type: 'stream', to, topic: 'custom', content });
      t.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.id as number;
    };
    const html = async (id: number) => (await sys.client(othello).get(`/messages/${id}`)).body.message as { content: string; reactions: unknown[] };
    t.equal((await postEmoji(sys, hamlet, 'party_time', [imageFile(red)])).status, 200);
    const id = (Object.values((await sys.client(hamlet).get('/realm/emoji')).body.emoji as Record<string, { id: string; name: string }>).find((e) => e.name === 'party_time'))?.id as string;
    // :smile: has a custom override (added by an administrator above); :octopus: is the built-in one.
    const first = await send('Ready :party_time: :octopus:');
    t.equal(
      (await html(first)).content,
      `<p>Ready <img alt=":party_time:" class="emoji" src="/user_avatars/${realm}/emoji/images/${id}.png" title="party time"> ` +
        '<span aria-label="octopus" class="emoji emoji-1f419" role="img" title="octopus">:octopus:</span></p>',
    );
    const rendered = await sys.client(othello).post('/messages/render', { content: ':party_time:' });
    t.match(rendered.body.rendered, /<img alt=":party_time:" class="emoji" src="\/user_avatars\/\d+\/emoji\/images\/\d+\.png" title="party time">/);

    // Reactions: by name, and by code with reaction_type realm_emoji (the code is the id).
    t.equal((await sys.client(othello).post(`/messages/${first}/reactions`, { emoji_name: 'party_time' })).status, 200);
    t.equal((await sys.client(hamlet).post(`/messages/${first}/reactions`, { emoji_name: 'party_time', emoji_code: id, reaction_type: 'realm_emoji' })).status, 200);
    t.match((await html(first)).reactions, [
      { emoji_name: 'party_time', emoji_code: id, reaction_type: 'realm_emoji', user_id: othello.user_id },
      { emoji_name: 'party_time', emoji_code: id, reaction_type: 'realm_emoji', user_id: hamlet.user_id },
    ]);
    // On a message nobody reacted to yet (a reaction someone already made is a vote, unchecked, as Zulip).
    const plain = await send('no reactions here');
    expectError(t, await sys.client(desdemona).post(`/messages/${plain}/reactions`, { emoji_name: 'party_time', emoji_code: '999999', reaction_type: 'realm_emoji' }), 400, 'Invalid custom emoji.');
    expectError(t, await sys.client(desdemona).post(`/messages/${plain}/reactions`, { emoji_name: 'ship_it', emoji_code: id, reaction_type: 'realm_emoji' }), 400, 'Invalid custom emoji name.');
    expectError(t, await sys.client(desdemona).post(`/messages/${plain}/reactions`, { emoji_name: 'not_an_emoji_at_all' }), 400, "Emoji 'not_an_emoji_at_all' does not exist");

    // Deactivated: no longer renders or reacts; existing reactions stay and can be removed by code.
    t.equal((await sys.client(hamlet).delete('/realm/emoji/party_time')).status, 200);
    const after = await send('Over :party_time:');
    t.equal((await html(after)).content, '<p>Over :party_time:</p>');
    expectError(t, await sys.client(desdemona).post(`/messages/${plain}/reactions`, { emoji_name: 'party_time', emoji_code: id, reaction_type: 'realm_emoji' }), 400, 'This custom emoji has been deactivated.');
    expectError(t, await sys.client(desdemona).post(`/messages/${plain}/reactions`, { emoji_name: 'party_time' }), 400, "Emoji 'party_time' does not exist");
    t.equal((await sys.client(desdemona).post(`/messages/${first}/reactions`, { emoji_name: 'party_time', emoji_code: id, reaction_type: 'realm_emoji' })).status, 200, 'a vote for a reaction already there is still taken');
    t.equal((await html(first)).reactions.length, 3, 'reactions made before stay');
    t.match((await html(first)).content, /<img alt=":party_time:"/, 'messages rendered before keep the emoji');
    t.equal((await sys.client(hamlet).delete(`/messages/${first}/reactions`, { emoji_code: id, reaction_type: 'realm_emoji' })).status, 200);
    t.equal((await html(first)).reactions.length, 2);
  });
});
