import { CUSTOMERS, type CustomerDoc } from '../../projections/customers.projection.ts';
import type { ReadStore } from '../../read-store/read-store.ts';
import type { DashboardTenant } from '../context.ts';

/** The tenant's customers of `ids` (none and repeats skipped), by id, read in one query: a list's page never reads one per row. */
export async function customersById(
  readStore: ReadStore,
  tenant: DashboardTenant,
  ids: readonly (string | null | undefined)[],
): Promise<Map<string, CustomerDoc>> {
  const wanted = [...new Set(ids.filter((id): id is string => typeof id === 'string' && id !== ''))];
  if (wanted.length === 0) return new Map();
  const found = await readStore
    .collection<CustomerDoc>(CUSTOMERS)
    .find({ organizationId: tenant.organizationId, environment: tenant.environment, id: { $in: wanted } });
  return new Map(found.map((c) => [c.id, c]));
}

/**
 * A record's customer by name (else email), linked to their page; a deleted one is named, not linked
 * (its page is gone); one not in `customer` (not read yet) is linked by its id.
 */
export function CustomerLink({ id, customer }: { id: string; customer: CustomerDoc | undefined }): JSX.Element {
  if (customer?.deleted) return <span safe>{`${customer.name || customer.email} (deleted)`}</span>;
  return (
    <a href={`/dashboard/customers/${encodeURIComponent(id)}`} safe>
      {customer?.name || customer?.email || id}
    </a>
  );
}
