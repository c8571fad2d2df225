import type { CustomerUpdate } from '../../machines/checkout-session.types.ts';
import type { CollectedData, CustomerDetails } from '../../machines/collected-data.types.ts';
import type { Aggregate } from './aggregate.ts';
import { InvalidStateError, ValidationError } from '../shared/errors.ts';
import type { Environment } from '../event-store/event-store.ts';
import { deterministicId } from '../shared/ids.ts';

/** A postal address, as the reference API spells it (every part optional). */
export type CustomerAddress = {
  line1: string | null;
  line2: string | null;
  city: string | null;
  state: string | null;
  postalCode: string | null;
  country: string | null;
};

/**
 * The reference's customer `shipping` (FullAddressDetailDto): where the customer's orders go, and
 * who receives them there (every part null when not given).
 */
export type CustomerShipping = {
  name: string | null;
  email: string | null;
  phone: string | null;
  organizationName: string | null;
  address: CustomerAddress | null;
};

/** A tax id as given (the reference's CreateTaxIdDto): `name` its kind (such as `eu_vat`), `country` upper-cased. */
export type TaxIdInput = { name: string | null; value: string; country: string | null };

/** A tax id the customer keeps (the reference's TaxIdDto, less `customerId`, which is the customer's). */
export type CustomerTaxId = TaxIdInput & { id: string; createdAt: string; updatedAt: string };

export type Customer = {
  id: string;
  organizationId: string;
  environment: Environment;
  /** Stored as given; compared and filtered lower-cased (`emailLower`). */
  email: string;
  emailLower: string;
  name: string | null;
  phone: string | null;
  organizationName: string | null;
  customerReferenceId: string | null;
  address: CustomerAddress | null;
  /** Absent until one was given (over the API or by a checkout session), null once cleared. */
  shipping?: CustomerShipping | null;
  /** Absent until some were given; in the order given. */
  taxIds?: CustomerTaxId[];
  metadata: Record<string, string>;
  /** 10 = shown in the dashboard, 20 = API only (the reference's `visibility`). */
  visibility: number;
  createdAt: string;
  updatedAt: string;
  deleted: boolean;
  deletedAt: string | null;
};

/** What a merchant may set on a customer (`taxIds` replaces the customer's list whole). */
export type CustomerFields = Pick<
  Customer,
  | 'email'
  | 'name'
  | 'phone'
  | 'organizationName'
  | 'customerReferenceId'
  | 'address'
  | 'shipping'
  | 'metadata'
  | 'visibility'
> & { taxIds?: TaxIdInput[] };

/** What an update changes: the fields it sets, each to its new value. */
export type CustomerChanges = Partial<
  Omit<Customer, 'id' | 'organizationId' | 'environment' | 'createdAt' | 'updatedAt' | 'deleted' | 'deletedAt'>
>;

/** What a completed checkout session may copy onto its customer (see `customerChangesFromCheckout`). */
export type CheckoutCustomerChanges = Partial<Pick<Customer, 'name' | 'address' | 'shipping'>>;

/** A checkout session whose details a customer took: the session, and when it completed. */
type CheckoutRef = { checkoutSessionId: string; completedAt: string };

/**
 * A customer as its decider sees it: with the latest checkout session whose details it took, so
 * that no session updates it twice and an older session's details never replace a newer one's.
 */
export type CustomerRecord = Customer & { checkoutDetailsFrom?: CheckoutRef };

export type CustomerEvent =
  | { type: 'CustomerCreated'; data: { customer: Omit<Customer, 'updatedAt' | 'deleted' | 'deletedAt'> } }
  | { type: 'CustomerUpdated'; data: { changes: CustomerChanges; at: string } }
  /** The customer took the details of a completed checkout session (`changes` is empty when it already had them). */
  | { type: 'CustomerUpdatedFromCheckout'; data: CheckoutRef & { changes: CheckoutCustomerChanges; at: string } }
  | { type: 'CustomerDeleted'; data: { at: string } };

export type CustomerCommand =
  | { type: 'CreateCustomer'; customer: Pick<Customer, 'id' | 'organizationId' | 'environment'> & CustomerFields }
  | { type: 'UpdateCustomer'; changes: Partial<CustomerFields> }
  | ({ type: 'UpdateCustomerFromCheckout'; changes: CheckoutCustomerChanges } & CheckoutRef)
  | { type: 'DeleteCustomer' };

/**
 * A practical email check: one `@`, a non-empty local part without spaces, and a dotted domain.
 * (Full RFC 5322 accepts addresses no mail system delivers to; this refuses the typos.)
 */
const EMAIL =
  /^[^\s@]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export function isEmail(value: string): boolean {
  return value.length <= 254 && EMAIL.test(value);
}

/** Throws a ValidationError naming `field` unless `value` is an email address. */
export function assertEmail(value: string, field = 'email'): void {
  if (!isEmail(value))
    throw new ValidationError(field, 'must be an email address, such as payer@example.com', 'email_invalid');
}

const PHONE = /^\+?[0-9 ()\-.]{3,40}$/;
export const PHONE_HINT = 'must be a phone number: digits, spaces, ( ) - . and an optional leading +';

/** Digits, spaces, ( ) - . and an optional leading +, with at least 3 digits. */
export function isPhone(value: string): boolean {
  return PHONE.test(value) && value.replace(/[^0-9]/g, '').length >= 3;
}

/**
 * A shipping in the reference's shape. Checkout sessions collect only a name and an address, and
 * the shipping that customers took from them before the other parts existed lacks those: null.
 */
export function fullShipping(shipping: Partial<CustomerShipping>): CustomerShipping {
  const { name = null, email = null, phone = null, organizationName = null, address = null } = shipping;
  return { name, email, phone, organizationName, address };
}

/**
 * The customer a checkout's payer details make: what a payment link page collected, or the
 * `customerData` of a session created over the API. Shown in the dashboard, like any customer.
 */
export function customerFromDetails(
  id: string,
  tenant: { organizationId: string; environment: Environment },
  details: CustomerDetails & { email: string },
): Extract<CustomerCommand, { type: 'CreateCustomer' }> {
  const taxIds = details.taxIds?.data ?? [];
  return {
    type: 'CreateCustomer',
    customer: {
      id,
      organizationId: tenant.organizationId,
      environment: tenant.environment,
      email: details.email,
      name: details.name,
      phone: details.phone,
      organizationName: details.organizationName ?? null,
      customerReferenceId: null,
      address: details.address,
      metadata: {},
      visibility: 10,
      ...(taxIds.length > 0 ? { taxIds } : {}),
    },
  };
}

/**
 * The tax ids a customer keeps for `given`: one it already has (same name, value and country) keeps
 * its id and creation time; a new one's id follows from the customer and its content, so a command
 * decided again records the same ids.
 */
export function keptTaxIds(
  customerId: string,
  given: TaxIdInput[],
  existing: CustomerTaxId[] | undefined,
  now: string,
): CustomerTaxId[] {
  const key = (t: TaxIdInput) => JSON.stringify([t.name, t.value, t.country]);
  const had = new Map((existing ?? []).map((t) => [key(t), t]));
  return given.map((t) => {
    const { name, value, country } = t;
    const kept = had.get(key(t));
    if (kept) return kept;
    return {
      id: deterministicId(`tax-id:${customerId}:${key(t)}`),
      name,
      value,
      country,
      createdAt: now,
      updatedAt: now,
    };
  });
}

/**
 * What a checkout session whose `customerUpdate` is `update` copies onto its customer from the
 * details it collected, for the parts set to `auto`: `name` the payer's name, `address` the billing
 * address, `shipping` the shipping details. A detail the session did not collect changes nothing.
 */
export function customerChangesFromCheckout(
  update: CustomerUpdate,
  collected: Partial<Pick<CollectedData, 'customerDetails' | 'billingDetails' | 'shippingDetails'>>,
): CheckoutCustomerChanges {
  const changes: CheckoutCustomerChanges = {};
  const name = collected.customerDetails?.name ?? collected.billingDetails?.name ?? null;
  if (update.name === 'auto' && name !== null) changes.name = name;
  const address = collected.billingDetails?.address ?? collected.customerDetails?.address ?? null;
  if (update.address === 'auto' && address !== null) changes.address = address;
  const shipping = collected.shippingDetails ?? null;
  if (update.shipping === 'auto' && shipping !== null) changes.shipping = fullShipping(shipping);
  return changes;
}

/**
 * The parts of `changes` that differ from the customer (a part left undefined changes nothing, and
 * clearing a part the customer never had, such as `shipping`, changes nothing either).
 */
function changedFields(customer: Customer, changes: Partial<Record<keyof Customer, unknown>>): CustomerChanges {
  const changed: CustomerChanges = {};
  for (const [key, value] of Object.entries(changes) as [keyof Customer, unknown][]) {
    if (value === undefined) continue;
    if (JSON.stringify(customer[key] ?? null) === JSON.stringify(value)) continue;
    (changed as Record<string, unknown>)[key] = value;
  }
  return changed;
}

/** Checkout sessions in the order their details apply: by completion, then by id. */
export const laterCheckout = (a: CheckoutRef, b: CheckoutRef): boolean =>
  a.completedAt > b.completedAt || (a.completedAt === b.completedAt && a.checkoutSessionId > b.checkoutSessionId);

/**
 * The details of a completed checkout session, taken once: a customer deleted in the meantime
 * takes nothing (the payer has paid; that is no error), and so does a repeat of the session or an
 * older session than the latest one taken.
 */
function updateFromCheckout(
  customer: CustomerRecord | null,
  command: Extract<CustomerCommand, { type: 'UpdateCustomerFromCheckout' }>,
  now: string,
): CustomerEvent[] {
  if (!customer || customer.deleted) return [];
  if (customer.checkoutDetailsFrom && !laterCheckout(command, customer.checkoutDetailsFrom)) return [];
  const { checkoutSessionId, completedAt } = command;
  return [
    {
      type: 'CustomerUpdatedFromCheckout',
      data: { checkoutSessionId, completedAt, changes: changedFields(customer, command.changes), at: now },
    },
  ];
}

/** The customer with `changes` made at `at` (a shipping recorded in an older shape read in the current one). */
function changed(customer: Customer, changes: CustomerChanges, at: string): Customer {
  const next = { ...customer, ...changes, updatedAt: at };
  if (changes.shipping) next.shipping = fullShipping(changes.shipping);
  return next;
}

export function evolveCustomer(customer: Customer | null, event: CustomerEvent): Customer | null {
  switch (event.type) {
    case 'CustomerCreated':
      return { ...event.data.customer, updatedAt: event.data.customer.createdAt, deleted: false, deletedAt: null };
    case 'CustomerUpdated':
      return customer && changed(customer, event.data.changes, event.data.at);
    case 'CustomerUpdatedFromCheckout':
      return (
        customer &&
        (Object.keys(event.data.changes).length === 0 ? customer : changed(customer, event.data.changes, event.data.at))
      );
    case 'CustomerDeleted':
      return customer && { ...customer, deleted: true, deletedAt: event.data.at, updatedAt: event.data.at };
  }
}

/**
 * A customer record. Creating twice is a no-op; a deleted customer is gone for every command
 * (deleting it again changes nothing); an update that changes nothing records nothing. The
 * details of a checkout session are taken at most once (see `updateFromCheckout`).
 */
export const customerAggregate: Aggregate<CustomerRecord | null, CustomerEvent, CustomerCommand> = {
  category: 'customer',
  initialState: () => null,
  evolve(record, event) {
    // evolveCustomer keeps the fields of the record it is given, `checkoutDetailsFrom` among them.
    const customer: CustomerRecord | null = evolveCustomer(record, event);
    if (!customer || event.type !== 'CustomerUpdatedFromCheckout') return customer;
    return {
      ...customer,
      checkoutDetailsFrom: { checkoutSessionId: event.data.checkoutSessionId, completedAt: event.data.completedAt },
    };
  },
  decide(customer, command, { now }) {
    if (command.type === 'CreateCustomer') {
      if (customer) return [];
      assertEmail(command.customer.email);
      const { taxIds, ...fields } = command.customer;
      const kept = taxIds ? { taxIds: keptTaxIds(fields.id, taxIds, undefined, now) } : {};
      return [
        {
          type: 'CustomerCreated',
          data: { customer: { ...fields, ...kept, emailLower: fields.email.toLowerCase(), createdAt: now } },
        },
      ];
    }
    if (command.type === 'UpdateCustomerFromCheckout') return updateFromCheckout(customer, command, now);
    if (command.type === 'DeleteCustomer' && customer?.deleted) return [];
    if (!customer || customer.deleted) throw new InvalidStateError('customer does not exist', 'resource_missing');
    if (command.type === 'DeleteCustomer') return [{ type: 'CustomerDeleted', data: { at: now } }];
    const { taxIds, ...fields } = command.changes;
    // An empty list given to a customer that never had tax ids changes nothing.
    const asKept =
      taxIds && (taxIds.length > 0 || customer.taxIds)
        ? { taxIds: keptTaxIds(customer.id, taxIds, customer.taxIds, now) }
        : {};
    const changes = changedFields(customer, { ...fields, ...asKept });
    if (changes.email !== undefined) {
      assertEmail(changes.email);
      changes.emailLower = changes.email.toLowerCase();
    }
    if (Object.keys(changes).length === 0) return [];
    return [{ type: 'CustomerUpdated', data: { changes, at: now } }];
  },
};
