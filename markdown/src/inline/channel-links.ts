// #**channel**, #**channel>topic** and #**channel>topic@message_id** links.
// The hrefs are realm-relative narrow URLs, as Zulip writes them.

import { atomicEl } from '../tree.js';
import { encodeChannel, encodeHashComponent } from '../urls.js';
import type { InlinePattern } from './engine.js';
import { linkBoundaryBefore, NextIndex, perText } from './scan.js';

const nextHash = perText((data) => new NextIndex(data, '#**'));
const nextStar = perText((data) => new NextIndex(data, '*'));

interface RawLink {
  start: number;
  end: number;
  /** Text between the stars. */
  body: string;
}

function findRaw(data: string, from: number): RawLink | undefined {
  for (let p = nextHash(data).from(from); p >= 0; p = nextHash(data).from(p + 1)) {
    if (!linkBoundaryBefore(data, p)) continue;
    const bodyStart = p + 3;
    const close = nextStar(data).from(bodyStart);
    if (close <= bodyStart || data[close + 1] !== '*') continue;
    return { start: p, end: close + 2, body: data.slice(bodyStart, close) };
  }
  return undefined;
}

type Kind = 'channel' | 'topic' | 'message';

interface Parsed {
  channel: string;
  topic?: string;
  messageId?: string;
}

function parseBody(body: string, kind: Kind): Parsed | undefined {
  if (kind === 'channel') return { channel: body };
  const gt = body.indexOf('>');
  if (gt <= 0) return undefined;
  const channel = body.slice(0, gt);
  const rest = body.slice(gt + 1);
  if (kind === 'topic') return { channel, topic: rest };
  const at = rest.lastIndexOf('@');
  const id = rest.slice(at + 1);
  if (at < 0 || !/^\d+$/.test(id)) return undefined;
  return { channel, topic: rest.slice(0, at), messageId: id };
}

function channelLinkPattern(kind: Kind): InlinePattern {
  return {
    name: kind === 'channel' ? 'stream' : kind === 'topic' ? 'topic' : 'stream_topic_message',
    find(data, from, env) {
      for (let pos = from; ; ) {
        const raw = findRaw(data, pos);
        if (!raw) return undefined;
        const parsed = parseBody(raw.body, kind);
        if (!parsed) {
          // Not this kind of link; a later #** may still be one.
          pos = raw.start + 1;
          continue;
        }
        const channel = env.state.ctx.streams?.byName(parsed.channel);
        if (!channel) return { start: raw.start, end: raw.end, node: null };
        let href = `/#narrow/channel/${encodeChannel(channel.id, channel.name)}`;
        if (parsed.topic === undefined) {
          const el = atomicEl('a', `#${channel.name}`, { class: 'stream', 'data-stream-id': String(channel.id) });
          el.set('href', href);
          return { start: raw.start, end: raw.end, node: el };
        }
        href += `/topic/${encodeHashComponent(parsed.topic)}`;
        if (parsed.messageId === undefined) {
          const el = atomicEl('a', `#${channel.name} > ${parsed.topic}`, {
            class: 'stream-topic',
            'data-stream-id': String(channel.id),
          });
          el.set('href', href);
          return { start: raw.start, end: raw.end, node: el };
        }
        href += `/near/${parsed.messageId}`;
        const el = atomicEl('a', `#${channel.name} > ${parsed.topic} @ 💬`, { class: 'message-link' });
        el.set('href', href);
        return { start: raw.start, end: raw.end, node: el };
      }
    },
  };
}

export const channelMessageLink = channelLinkPattern('message');
export const channelTopicLink = channelLinkPattern('topic');
export const channelLink = channelLinkPattern('channel');
