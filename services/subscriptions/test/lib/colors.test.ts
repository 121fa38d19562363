import t from 'tap';
import { STREAM_COLOR_PALETTE, isHexColor, pickColors } from '../../src/lib/colors.js';

t.test('new subscriptions take the first palette colors the user does not use, in stream id order', async (t) => {
  const picked = pickColors([], [9, 3]);
  t.equal(picked.get(3), STREAM_COLOR_PALETTE[0]);
  t.equal(picked.get(9), STREAM_COLOR_PALETTE[1]);
  const next = pickColors([STREAM_COLOR_PALETTE[0], STREAM_COLOR_PALETTE[2].toUpperCase()], [5, 6]);
  t.equal(next.get(5), STREAM_COLOR_PALETTE[1]);
  t.equal(next.get(6), STREAM_COLOR_PALETTE[3], 'used colors match regardless of case');
});

t.test('once the palette is used up, the stream id chooses the color', async (t) => {
  const picked = pickColors(STREAM_COLOR_PALETTE, [25, 26]);
  t.equal(picked.get(25), STREAM_COLOR_PALETTE[25 % STREAM_COLOR_PALETTE.length]);
  t.equal(picked.get(26), STREAM_COLOR_PALETTE[26 % STREAM_COLOR_PALETTE.length]);
});

t.test('hex colors', async (t) => {
  t.ok(isHexColor('#a1B2c3'));
  for (const bad of ['a1b2c3', '#abc', '#abcdefg', '#ggggg0', '']) t.notOk(isHexColor(bad), bad);
});
