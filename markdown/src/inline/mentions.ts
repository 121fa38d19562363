// @**Full Name**, @**Full Name|id**, @**|id**, silent @_**…**, wildcard
// mentions (@**all**, @**topic**…) and group mentions @*group*, @_*group*.
// A mention that names nobody stays plain text.

import type { MentionUser } from '../context.js';
import { atomicEl } from '../tree.js';
import type { InlineEnv, InlinePattern } from './engine.js';
import { mentionBoundaryBefore, NextIndex, perText } from './scan.js';

const STREAM_WILDCARDS = new Set(['all', 'everyone', 'stream', 'channel']);
const TOPIC_WILDCARD = 'topic';
const ID_SYNTAX = /^(.+)?\|(\d+)$/;

const nextAt = perText((data) => new NextIndex(data, '@'));
const nextStar = perText((data) => new NextIndex(data, '*'));

interface RawMention {
  start: number;
  end: number;
  silent: boolean;
  name: string;
}

/** Finds `@` `_`? then `stars` + `[^*]+` + `stars`, with the mention boundary before the `@`. */
function findRaw(data: string, from: number, stars: string): RawMention | undefined {
  for (let at = nextAt(data).from(from); at >= 0; at = nextAt(data).from(at + 1)) {
    if (!mentionBoundaryBefore(data, at)) continue;
    const silent = data[at + 1] === '_';
    const open = at + 1 + (silent ? 1 : 0);
    if (!data.startsWith(stars, open)) continue;
    const nameStart = open + stars.length;
    const close = nextStar(data).from(nameStart);
    if (close <= nameStart || !data.startsWith(stars, close)) continue;
    return { start: at, end: close + stars.length, silent, name: data.slice(nameStart, close) };
  }
  return undefined;
}

function lookUpUser(env: InlineEnv, name: string): MentionUser | undefined | null {
  const users = env.state.ctx.users;
  if (!users) return undefined;
  const idSyntax = ID_SYNTAX.exec(name);
  if (!idSyntax) return users.byFullName(name);
  const user = users.byId(Number(idSyntax[2]));
  // @**someone's name|someone else's id** is not a mention at all.
  if (idSyntax[1] && user && user.full_name !== idSyntax[1]) return null;
  return user;
}

export const userMention: InlinePattern = {
  name: 'usermention',
  find(data, from, env) {
    const m = findRaw(data, from, '**');
    if (!m) return undefined;
    const state = env.state;
    let silent = m.silent;
    let cls: string;
    let text = m.name;
    let userId: string | undefined;
    if (STREAM_WILDCARDS.has(m.name)) {
      if (!silent) state.mentionsStreamWildcard = true;
      cls = 'user-mention channel-wildcard-mention';
      userId = '*';
    } else if (m.name === TOPIC_WILDCARD) {
      if (!silent) state.mentionsTopicWildcard = true;
      cls = 'topic-mention';
    } else {
      const user = lookUpUser(env, m.name);
      if (!user) return { start: m.start, end: m.end, node: null };
      // Mentioning a deactivated user renders but notifies no one.
      if (user.is_active === false) silent = true;
      if (!silent) state.mentionedUserIds.add(user.id);
      cls = 'user-mention';
      text = user.full_name;
      userId = String(user.id);
    }
    const el = atomicEl('span', silent ? text : `@${text}`, { class: silent ? `${cls} silent` : cls });
    if (userId !== undefined) el.set('data-user-id', userId);
    return { start: m.start, end: m.end, node: el };
  },
};

export const groupMention: InlinePattern = {
  name: 'usergroupmention',
  find(data, from, env) {
    const m = findRaw(data, from, '*');
    if (!m) return undefined;
    const group = env.state.ctx.userGroups?.byName(m.name);
    if (!group) return { start: m.start, end: m.end, node: null };
    const silent = m.silent || group.deactivated === true;
    if (!silent) env.state.mentionedGroupIds.add(group.id);
    const el = atomicEl('span', silent ? group.name : `@${group.name}`, {
      class: silent ? 'user-group-mention silent' : 'user-group-mention',
      'data-user-group-id': String(group.id),
    });
    return { start: m.start, end: m.end, node: el };
  },
};
