// The render context Zulip's own conformance fixtures assume: its test realm
// (http://zulip.testserver), a few of its users and channels, and the image
// proxy ("camo") settings of its test server.

import type { MentionUser, RenderContext, StreamRef } from '../src/index.js';

export const REALM_URL = 'http://zulip.testserver';

const USERS: MentionUser[] = [
  { id: 7, full_name: 'Zoe' },
  { id: 8, full_name: 'King Hamlet' },
  { id: 9, full_name: 'Othello, the Moor of Venice' },
  { id: 10, full_name: 'Iago' },
  { id: 11, full_name: "Cordelia, Lear's daughter" },
  { id: 12, full_name: 'Old Ex User', is_active: false },
];

const STREAMS: StreamRef[] = [
  { id: 1, name: 'Denmark' },
  { id: 2, name: 'Scotland' },
  { id: 3, name: 'Verona' },
  { id: 13, name: 'social' },
];

const GROUPS = [
  { id: 20, name: 'hamletcharacters' },
  { id: 21, name: 'support' },
];

export function fixtureContext(overrides: Partial<RenderContext> = {}): RenderContext {
  return {
    realmUrl: REALM_URL,
    users: {
      byFullName: (name) => USERS.find((u) => u.full_name.toLowerCase() === name.toLowerCase()),
      byId: (id) => USERS.find((u) => u.id === id),
    },
    userGroups: { byName: (name) => GROUPS.find((g) => g.name.toLowerCase() === name.toLowerCase()) },
    streams: { byName: (name) => STREAMS.find((s) => s.name.toLowerCase() === name.toLowerCase()) },
    // Zulip's test server proxies external images with this (public, test-only) key.
    imageProxy: { url: 'https://external-content.zulipcdn.net/external_content/', key: 'dummy' },
    ...overrides,
  };
}
