import { USERS, type UserDoc } from '../projections/team.projection.ts';
import type { ReadStore } from '../read-store/read-store.ts';

/** The organization's members, oldest first (removed users are gone). */
export const organizationMembers = (readStore: ReadStore, organizationId: string): Promise<UserDoc[]> =>
  readStore
    .collection<UserDoc>(USERS)
    .find({ organizationId, removed: false }, { sort: { createdAt: 1 }, limit: 1000 });

/** The id of the organization's first owner still a member, or null while it has none (keys only, no dashboard user yet). */
export async function organizationOwnerId(readStore: ReadStore, organizationId: string): Promise<string | null> {
  const [owner] = await readStore
    .collection<UserDoc>(USERS)
    .find({ organizationId, removed: false, role: 'owner' }, { sort: { createdAt: 1 }, limit: 1 });
  return owner?.id ?? null;
}
