import test from 'ava';
import type { CustomerUpdate } from '../../machines/checkout-session.types.ts';
import {
  customerAggregate,
  customerChangesFromCheckout,
  type CustomerAddress,
  type CustomerCommand,
  type CustomerEvent,
  type CustomerShipping,
} from './customer.ts';
import { givenWhenThen } from './given-when-then.ts';

const given = givenWhenThen(customerAggregate);
const CREATED_AT = '2026-01-01T00:00:00.000Z';
const NOW = '2026-01-01T00:30:00.000Z';
const HOME: CustomerAddress = {
  line1: '1 Harbour Road',
  line2: null,
  city: 'Lisbon',
  state: null,
  postalCode: '1100-001',
  country: 'PT',
};
const DEPOT: CustomerAddress = {
  line1: '9 Quay',
  line2: 'Gate 4',
  city: 'Porto',
  state: null,
  postalCode: '4000-001',
  country: 'PT',
};

const created: CustomerEvent = {
  type: 'CustomerCreated',
  data: {
    customer: {
      id: 'cus-1',
      organizationId: 'org-1',
      environment: 'test',
      email: 'pat@example.com',
      emailLower: 'pat@example.com',
      name: null,
      phone: null,
      organizationName: null,
      customerReferenceId: null,
      address: null,
      metadata: {},
      visibility: 10,
      createdAt: CREATED_AT,
    },
  },
};

const fromCheckout = (
  checkoutSessionId: string,
  completedAt: string,
  changes: Extract<CustomerCommand, { type: 'UpdateCustomerFromCheckout' }>['changes'],
): Extract<CustomerCommand, { type: 'UpdateCustomerFromCheckout' }> => ({
  type: 'UpdateCustomerFromCheckout',
  checkoutSessionId,
  completedAt,
  changes,
});

const took = (checkoutSessionId: string, completedAt: string, changes: object, at = NOW): CustomerEvent => ({
  type: 'CustomerUpdatedFromCheckout',
  data: { checkoutSessionId, completedAt, changes, at },
});

test('UpdateCustomerFromCheckout records what differs, with the session it came from, and the customer takes it', (t) => {
  const shipping: CustomerShipping = {
    name: 'Pat Payer',
    email: null,
    phone: null,
    organizationName: null,
    address: DEPOT,
  };
  const events = given([created]).when(
    fromCheckout('cs-1', '2026-01-01T00:20:00.000Z', { name: 'Pat Payer', address: HOME, shipping }),
  );
  t.deepEqual(events, [took('cs-1', '2026-01-01T00:20:00.000Z', { name: 'Pat Payer', address: HOME, shipping })]);
  const customer = given([created, ...events]).state();
  t.like(customer, { name: 'Pat Payer', address: HOME, shipping, updatedAt: NOW, email: 'pat@example.com' });
});

test('UpdateCustomerFromCheckout takes a session once: a repeat, or an older session than one taken, records nothing', (t) => {
  const taken = [created, took('cs-2', '2026-01-01T00:20:00.000Z', { name: 'Pat Payer' })];
  t.deepEqual(
    given(taken).when(fromCheckout('cs-2', '2026-01-01T00:20:00.000Z', { name: 'Pat Payer' })),
    [],
    'a repeat',
  );
  t.deepEqual(
    given(taken).when(fromCheckout('cs-2', '2026-01-01T00:20:00.000Z', { name: 'Someone Else' })),
    [],
    'a repeat, even after a change',
  );
  t.deepEqual(
    given(taken).when(fromCheckout('cs-3', '2026-01-01T00:10:00.000Z', { name: 'Older Name' })),
    [],
    'completed before the one taken',
  );
  t.deepEqual(
    given(taken).when(fromCheckout('cs-1', '2026-01-01T00:20:00.000Z', { name: 'Tie' })),
    [],
    'same completion, earlier id',
  );
  t.deepEqual(
    given(taken).when(fromCheckout('cs-3', '2026-01-01T00:20:00.000Z', { name: 'Tie' })),
    [took('cs-3', '2026-01-01T00:20:00.000Z', { name: 'Tie' })],
    'same completion, later id',
  );
  t.deepEqual(given(taken).when(fromCheckout('cs-4', '2026-01-01T00:25:00.000Z', { name: 'Newer' })), [
    took('cs-4', '2026-01-01T00:25:00.000Z', { name: 'Newer' }),
  ]);
});

test('UpdateCustomerFromCheckout with details the customer already has records the session with no changes, and leaves updatedAt', (t) => {
  const named = [
    created,
    {
      type: 'CustomerUpdated',
      data: { changes: { name: 'Pat Payer' }, at: '2026-01-01T00:05:00.000Z' },
    } as CustomerEvent,
  ];
  const events = given(named).when(fromCheckout('cs-1', '2026-01-01T00:20:00.000Z', { name: 'Pat Payer' }));
  t.deepEqual(events, [took('cs-1', '2026-01-01T00:20:00.000Z', {})]);
  t.like(given([...named, ...events]).state(), { name: 'Pat Payer', updatedAt: '2026-01-01T00:05:00.000Z' });
  t.deepEqual(
    given([...named, ...events]).when(fromCheckout('cs-1', '2026-01-01T00:20:00.000Z', { name: 'Pat Payer' })),
    [],
    'and then it is taken',
  );
});

test('UpdateCustomerFromCheckout leaves a deleted or unknown customer alone, without an error', (t) => {
  const deleted: CustomerEvent = { type: 'CustomerDeleted', data: { at: '2026-01-01T00:10:00.000Z' } };
  t.deepEqual(
    given([created, deleted]).when(fromCheckout('cs-1', '2026-01-01T00:20:00.000Z', { name: 'Pat Payer' })),
    [],
  );
  t.deepEqual(given([]).when(fromCheckout('cs-1', '2026-01-01T00:20:00.000Z', { name: 'Pat Payer' })), []);
});

test("the merchant's own update still refuses a deleted customer and records nothing for no change", (t) => {
  const deleted: CustomerEvent = { type: 'CustomerDeleted', data: { at: '2026-01-01T00:10:00.000Z' } };
  t.throws(() => given([created, deleted]).when({ type: 'UpdateCustomer', changes: { name: 'Pat' } }), {
    message: /customer does not exist/,
  });
  t.deepEqual(
    given([created]).when({ type: 'UpdateCustomer', changes: { email: 'pat@example.com', name: undefined } }),
    [],
  );
  t.deepEqual(given([created]).when({ type: 'UpdateCustomer', changes: { email: 'Pat@Example.com' } }), [
    {
      type: 'CustomerUpdated',
      data: { changes: { email: 'Pat@Example.com', emailLower: 'pat@example.com' }, at: NOW },
    },
  ]);
});

test('customerChangesFromCheckout takes the collected name, billing address and shipping, for the auto parts only', (t) => {
  const auto: CustomerUpdate = { address: 'auto', name: 'auto', shipping: 'auto' };
  const collected = {
    customerDetails: { name: 'Pat Payer', email: 'pat@example.com', phone: null, address: HOME },
    billingDetails: { name: 'Pat Payer', address: HOME },
    shippingDetails: { name: 'Pat at work', address: DEPOT },
  };
  // The shipping in the shape the API takes and returns: what a session does not collect for it is null.
  const shipping: CustomerShipping = {
    name: 'Pat at work',
    email: null,
    phone: null,
    organizationName: null,
    address: DEPOT,
  };
  t.deepEqual(customerChangesFromCheckout(auto, collected), { name: 'Pat Payer', address: HOME, shipping });
  t.deepEqual(customerChangesFromCheckout({ ...auto, name: 'never' }, collected), { address: HOME, shipping });
  t.deepEqual(customerChangesFromCheckout({ ...auto, address: 'never', shipping: 'never' }, collected), {
    name: 'Pat Payer',
  });
  t.deepEqual(customerChangesFromCheckout({ address: 'never', name: 'never', shipping: 'never' }, collected), {});
  // The billing details' address comes first; a merchant's prefilled customerData address stands in for it.
  t.deepEqual(
    customerChangesFromCheckout(auto, {
      customerDetails: { ...collected.customerDetails, address: DEPOT },
      billingDetails: { name: null, address: HOME },
    }),
    { name: 'Pat Payer', address: HOME },
  );
  t.deepEqual(
    customerChangesFromCheckout(auto, { customerDetails: { name: null, email: null, phone: null, address: HOME } }),
    { address: HOME },
  );
  t.deepEqual(customerChangesFromCheckout(auto, { billingDetails: { name: 'Billed Name', address: HOME } }), {
    name: 'Billed Name',
    address: HOME,
  });
  // Nothing collected: nothing to take.
  t.deepEqual(customerChangesFromCheckout(auto, {}), {});
  t.deepEqual(
    customerChangesFromCheckout(auto, { customerDetails: null, billingDetails: null, shippingDetails: null }),
    {},
  );
});

test('UpdateCustomer sets, replaces and clears the shipping; clearing one the customer never had records nothing', (t) => {
  const shipping: CustomerShipping = {
    name: 'Pat at work',
    email: 'desk@example.com',
    phone: '+351 21 000 0000',
    organizationName: 'Quay Ltd',
    address: DEPOT,
  };
  const set = given([created]).when({ type: 'UpdateCustomer', changes: { shipping } });
  t.deepEqual(set, [{ type: 'CustomerUpdated', data: { changes: { shipping }, at: NOW } }]);
  t.like(given([created, ...set]).state(), { shipping, updatedAt: NOW });
  t.deepEqual(
    given([created, ...set]).when({ type: 'UpdateCustomer', changes: { shipping } }),
    [],
    'the same shipping again',
  );
  const moved: CustomerShipping = { ...shipping, phone: null, address: HOME };
  t.deepEqual(
    given([created, ...set]).when({ type: 'UpdateCustomer', changes: { shipping: moved } }),
    [{ type: 'CustomerUpdated', data: { changes: { shipping: moved }, at: NOW } }],
    'replaced whole',
  );
  const cleared = given([created, ...set]).when({ type: 'UpdateCustomer', changes: { shipping: null } });
  t.deepEqual(cleared, [{ type: 'CustomerUpdated', data: { changes: { shipping: null }, at: NOW } }]);
  t.is(given([created, ...set, ...cleared]).state()?.shipping, null);
  t.deepEqual(given([created]).when({ type: 'UpdateCustomer', changes: { shipping: null } }), []);
  t.false('shipping' in given([created]).state()!, 'a customer that never had a shipping has none');
});

test("a shipping taken from a checkout session before it had the reference's parts reads back with them null", (t) => {
  // As recorded before the API took shipping: a name and an address only.
  const tookOld = {
    type: 'CustomerUpdatedFromCheckout',
    data: {
      checkoutSessionId: 'cs-1',
      completedAt: NOW,
      changes: { shipping: { name: 'Pat', address: DEPOT } },
      at: NOW,
    },
  } as CustomerEvent;
  const full: CustomerShipping = { name: 'Pat', email: null, phone: null, organizationName: null, address: DEPOT };
  t.deepEqual(given([created, tookOld]).state()?.shipping, full);
  t.deepEqual(
    given([created, tookOld]).when({ type: 'UpdateCustomer', changes: { shipping: full } }),
    [],
    'the same shipping, in the current shape',
  );
});

test('UpdateCustomer replaces the tax ids: one kept keeps its id and creation time, the same list again or an empty one never had records nothing', (t) => {
  const vat = { name: 'eu_vat', value: 'PT123456789', country: 'PT' };
  const set = given([created]).when({ type: 'UpdateCustomer', changes: { taxIds: [vat] } }, CREATED_AT);
  const [first] = (set[0]?.type === 'CustomerUpdated' && set[0].data.changes.taxIds) || [];
  t.like(first, { ...vat, createdAt: CREATED_AT, updatedAt: CREATED_AT });
  t.deepEqual(
    given([created]).when({ type: 'UpdateCustomer', changes: { taxIds: [vat] } }, NOW),
    [
      {
        type: 'CustomerUpdated',
        data: { changes: { taxIds: [{ ...first!, createdAt: NOW, updatedAt: NOW }] }, at: NOW },
      },
    ],
    'decided again, the same id',
  );
  t.deepEqual(given([created, ...set]).when({ type: 'UpdateCustomer', changes: { taxIds: [vat] } }), []);
  const other = { name: null, value: 'PT1', country: null };
  const replaced = given([created, ...set]).when({ type: 'UpdateCustomer', changes: { taxIds: [other, vat] } });
  t.like(replaced[0], { data: { changes: { taxIds: [{ ...other, createdAt: NOW }, first] } } });
  t.deepEqual(given([created]).when({ type: 'UpdateCustomer', changes: { taxIds: [] } }), []);
  t.false('taxIds' in given([created]).state()!, 'a customer never given tax ids has none');
});
