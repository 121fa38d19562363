/**
 * @zc/shared/directory: the realm/user directory every service keeps in its own schema.
 * Include DIRECTORY_MIGRATIONS in the service definition's `migrationLibraries`, make one
 * `Directory` at start, and feed it with `consume(durable)` (or `apply` from a consumer of
 * your own, filtering with `isDirectoryEvent`).
 */
export * from './directory.js';
export * from './migrations.js';
export * from './store.js';
