/**
 * Personal stream colors. Zulip gives each new subscription the first color of its palette
 * that the user does not use yet, and once all are taken, one chosen by the stream id.
 */
export const STREAM_COLOR_PALETTE = [
  '#76ce90', '#fae589', '#a6c7e5', '#e79ab5', '#bfd56f', '#f4ae55', '#b0a5fd', '#addfe5',
  '#f5ce6e', '#c2726a', '#94c849', '#bd86e5', '#ee7e4a', '#a6dcbf', '#95a5fd', '#53a063',
  '#9987e1', '#e4523d', '#c2c2c2', '#4f8de4', '#c6a8ad', '#e7cc4d', '#c8bebf', '#a47462',
] as const;

/**
 * Colors for new subscriptions of one user, in stream id order; `used` holds the colors of
 * the user's existing subscriptions. Each pick counts as used for the next stream.
 */
export function pickColors(used: Iterable<string>, streamIds: readonly number[]): Map<number, string> {
  const taken = new Set([...used].map((c) => c.toLowerCase()));
  const free = STREAM_COLOR_PALETTE.filter((c) => !taken.has(c));
  const out = new Map<number, string>();
  [...streamIds].sort((a, b) => a - b).forEach((id, i) => {
    out.set(id, free[i] ?? (STREAM_COLOR_PALETTE[id % STREAM_COLOR_PALETTE.length] as string));
  });
  return out;
}

const HEX_COLOR = /^#[0-9a-fA-F]{6}$/;

export function isHexColor(value: string): boolean {
  return HEX_COLOR.test(value);
}
