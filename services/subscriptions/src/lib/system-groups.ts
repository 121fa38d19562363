/**
 * User groups belong to the users service, which does not have them yet. Streams still need
 * `can_remove_subscribers_group_id` (spec 2.5, feature level 142): at our feature level it is
 * always the realm's `role:administrators` system group. Until groups exist we give each
 * realm's system groups a fixed block of ids, in Zulip's creation order, so the id is
 * stable and the users service can create the groups with exactly these ids later.
 */
const SYSTEM_GROUPS = [
  'role:internet',
  'role:everyone',
  'role:members',
  'role:fullmembers',
  'role:moderators',
  'role:administrators',
  'role:owners',
  'role:nobody',
] as const;

export type SystemGroupName = (typeof SYSTEM_GROUPS)[number];

/** The id reserved for a realm's system group: realm_id * 8 + its position (0-based). */
export function systemGroupId(realmId: number, name: SystemGroupName): number {
  return realmId * SYSTEM_GROUPS.length + SYSTEM_GROUPS.indexOf(name);
}

export function administratorsGroupId(realmId: number): number {
  return systemGroupId(realmId, 'role:administrators');
}
