export * from './common.js';
export * from './events.js';
export * from './subscriptions.js';
export * from './users.js';
export * from './version.js';
