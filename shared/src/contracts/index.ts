export * from './common.js';
export * from './drafts.js';
export * from './events.js';
export * from './messages.js';
export * from './subscriptions.js';
export * from './users.js';
export * from './version.js';
export * from './user-groups.js';
