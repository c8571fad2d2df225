import type { Environment } from '../event-store/event-store.ts';
import type { CustomerDoc } from '../projections/customers.projection.ts';
import type { Collection } from '../read-store/read-store.ts';
import { ValidationError } from '../shared/errors.ts';

type TenantRef = { organizationId: string; environment: Environment };

/** The tenant's customer with this id: of its organization and environment, and not deleted; null for anything else. */
export async function findTenantCustomer(
  customers: Collection<CustomerDoc>,
  tenant: TenantRef,
  customerId: string,
): Promise<CustomerDoc | null> {
  const customer = await customers.get(customerId);
  const owned =
    customer !== null &&
    customer.organizationId === tenant.organizationId &&
    customer.environment === tenant.environment;
  return owned && !customer.deleted ? customer : null;
}

/**
 * The customer a merchant names by `customerId` on a record it creates or edits (a checkout
 * session, an invoice). An id that is no customer of the tenant in that environment (unknown,
 * deleted, another organization's or environment's) is a 400 naming `customerId`, before anything
 * is written: the record's mails (an invoice, a subscription's renewals) would reach no one.
 */
export async function requireTenantCustomer(
  customers: Collection<CustomerDoc>,
  tenant: TenantRef,
  customerId: string,
): Promise<CustomerDoc> {
  const customer = await findTenantCustomer(customers, tenant, customerId);
  if (!customer) throw new ValidationError('customerId', `customer ${customerId} does not exist`, 'resource_missing');
  return customer;
}
