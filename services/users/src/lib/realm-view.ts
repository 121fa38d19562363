import type { RealmRecord } from '@zc/shared/contracts';
import type { RealmRow } from '../store/realm-store.js';
import { realmSettings } from '@zc/shared/policy';

export function toRealmRecord(r: RealmRow, url: string): RealmRecord {
  return {
    realm_id: r.id,
    subdomain: r.subdomain,
    name: r.name,
    description: r.description,
    deactivated: r.deactivated,
    url,
    settings: { ...realmSettings(r.settings), email_address_visibility: r.email_address_visibility },
    date_created: Math.floor(r.date_created.getTime() / 1000),
    revision: r.revision,
  };
}
