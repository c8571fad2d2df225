import test from 'ava';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import {
  assertError,
  assertRejectedWithoutWrite,
  createCustomer,
  payInFull,
  type Page,
  type Session,
} from './helpers.ts';

/** A checkout session's customer fields, as the reference names them. */
type SessionCustomer = Session & {
  customerId: string | null;
  customerCreation: string;
  customerDetails?: {
    name: string | null;
    email: string | null;
    phone: string | null;
    organizationName: string | null;
    address: Record<string, string | null> | null;
  };
};
type Customer = { id: string; email: string; name: string | null; organizationName: string | null };

const SESSIONS = '/api/v1/checkout/sessions';

async function setup(t: Parameters<typeof startTestWeir>[0]) {
  const weir = await startTestWeir(t);
  return { weir, ...(await createMerchant(weir.url)) };
}

const customerEvents = async (weir: Awaited<ReturnType<typeof startTestWeir>>) =>
  (await weir.eventStore.readAll(null, 100_000)).filter((e) => e.type.startsWith('Customer'));

test('a payment session without a customer is unchanged: no customer, no customer details, nothing created when paid', async (t) => {
  const { weir, api } = await setup(t);
  const created = await api.post<SessionCustomer>(SESSIONS, sessionRequest());
  t.is(created.status, 200, JSON.stringify(created.body));
  t.like(created.body, { mode: 'payment', customerId: null, customerCreation: 'if_required' });
  t.false('customerDetails' in created.body);
  await payInFull(weir, api, created.body);
  t.deepEqual(await customerEvents(weir), []);
  t.is((await api.get<Page<Customer>>('/api/v1/customers')).body.count, 0);
});

test('customerData prefills a payment session; customerCreation if_required creates no customer for a payment, always does', async (t) => {
  const { weir, api } = await setup(t);
  const customerData = { email: 'pat@example.com', name: 'Pat', organizationName: 'Pat Ltd' };

  const prefilled = await api.post<SessionCustomer>(SESSIONS, { ...sessionRequest(), customerData });
  t.is(prefilled.status, 200, JSON.stringify(prefilled.body));
  t.like(prefilled.body, {
    customerId: null,
    customerCreation: 'if_required',
    customerDetails: { ...customerData, phone: null, address: null },
  });
  t.deepEqual(await customerEvents(weir), [], 'if_required: a payment needs no customer');

  const always = await api.post<SessionCustomer>(SESSIONS, {
    ...sessionRequest(),
    customerData,
    customerCreation: 'always',
  });
  t.is(always.status, 200, JSON.stringify(always.body));
  t.like(always.body, { customerCreation: 'always', customerDetails: customerData });
  t.truthy(always.body.customerId);
  t.like((await api.get<Customer>(`/api/v1/customers/${always.body.customerId}`)).body, {
    id: always.body.customerId,
    ...customerData,
  });
  t.deepEqual(
    (await api.get<Page<SessionCustomer>>(`${SESSIONS}?customerId=${always.body.customerId}`)).body.data.map(
      (s) => s.id,
    ),
    [always.body.id],
  );

  // With a customerId, always creates nothing: the session has its customer.
  const named = await api.post<SessionCustomer>(SESSIONS, {
    ...sessionRequest(),
    customerId: always.body.customerId,
    customerData,
    customerCreation: 'always',
  });
  t.is(named.body.customerId, always.body.customerId);
  t.is((await customerEvents(weir)).length, 1);
});

test("customerData.taxIds (the reference's list) go onto the customer customerCreation always creates, and show in the session's customerDetails; an empty list is as none", async (t) => {
  const { api } = await setup(t);
  const taxIds = { object: 'list', data: [{ name: 'eu_vat', value: 'DE123', country: 'de' }] };
  const stored = { object: 'list', data: [{ name: 'eu_vat', value: 'DE123', country: 'DE' }] };
  const always = await api.post<SessionCustomer & { customerDetails: { taxIds?: unknown } }>(SESSIONS, {
    ...sessionRequest(),
    customerData: { email: 't@ex.com', taxIds },
    customerCreation: 'always',
  });
  t.is(always.status, 200, JSON.stringify(always.body));
  // The reference's tax id fields: the session's copy names its customer and has no id of its own.
  t.deepEqual(always.body.customerDetails.taxIds, {
    object: 'list',
    data: [{ id: null, customerId: always.body.customerId, ...stored.data[0] }],
  });
  const customer = await api.get<{ taxIds: { data: Record<string, unknown>[] } }>(
    `/api/v1/customers/${always.body.customerId}`,
  );
  t.like(customer.body.taxIds, { object: 'list', data: [{ ...stored.data[0], customerId: always.body.customerId }] });

  const empty = await api.post<SessionCustomer & { customerDetails: object }>(SESSIONS, {
    ...sessionRequest(),
    customerData: { email: 'e@ex.com', taxIds: { object: 'list', data: [] } },
    customerCreation: 'always',
  });
  t.is(empty.status, 200, JSON.stringify(empty.body));
  t.false('taxIds' in empty.body.customerDetails);
  t.like((await api.get<{ taxIds: unknown }>(`/api/v1/customers/${empty.body.customerId}`)).body, {
    taxIds: { object: 'list', data: [] },
  });
});

test('bad customerData and customerCreation are 400s naming the field, and write nothing', async (t) => {
  const { weir, api } = await setup(t);
  const cases: [unknown, string, RegExp?][] = [
    [{ customerData: 'pat@example.com' }, 'customerData', /must be an object/],
    [{ customerData: { email: 'not-an-email' } }, 'customerData.email', /email address/],
    [{ customerData: { email: 7 } }, 'customerData.email', /must be a string/],
    [{ customerData: { email: '' } }, 'customerData.email', /must not be empty/],
    [{ customerData: { email: `${'a'.repeat(250)}@example.com` } }, 'customerData.email', /at most 254/],
    [{ customerData: { email: 'pat@example.com', name: 'x'.repeat(251) } }, 'customerData.name', /at most 250/],
    [{ customerData: { email: 'pat@example.com', name: ['Pat'] } }, 'customerData.name', /must be a string/],
    [{ customerData: { email: 'pat@example.com', phone: 'call me' } }, 'customerData.phone', /phone number/],
    [
      { customerData: { email: 'pat@example.com', organizationName: 'x'.repeat(251) } },
      'customerData.organizationName',
      /at most 250/,
    ],
    [{ customerData: { email: 'pat@example.com', address: '1 Main St' } }, 'customerData.address', /must be an object/],
    [
      { customerData: { email: 'pat@example.com', address: { street: '1 Main St' } } },
      'customerData.address.street',
      /not an address field/,
    ],
    [
      { customerData: { email: 'pat@example.com', address: { country: 'USA' } } },
      'customerData.address.country',
      /at most 2/,
    ],
    [
      { customerData: { email: 'pat@example.com', address: { country: 'U1' } } },
      'customerData.address.country',
      /two-letter/,
    ],
    [
      { customerData: { email: 'pat@example.com', address: { city: 'x'.repeat(201) } } },
      'customerData.address.city',
      /at most 200/,
    ],
    [{ customerData: { email: 'pat@example.com', taxIds: [] } }, 'customerData.taxIds', /must be an object/],
    [
      { customerData: { email: 'pat@example.com', taxIds: { data: [{ name: 'eu_vat' }] } } },
      'customerData.taxIds.data[0].value',
      /required/,
    ],
    [
      { customerData: { email: 'pat@example.com', taxIds: { data: [{ value: 'DE1', vat: true }] } } },
      'customerData.taxIds.data[0].vat',
      /not a tax id field/,
    ],
    [{ customerData: { email: 'pat@example.com', fax: '555' } }, 'customerData.fax', /not a customer data field/],
    [{ customerCreation: 'never' }, 'customerCreation', /if_required, always/],
    [{ customerCreation: 'always' }, 'customerData.email', /is required with customerCreation always/],
    [
      { customerCreation: 'always', customerData: { name: 'Pat' } },
      'customerData.email',
      /is required with customerCreation always/,
    ],
  ];
  for (const [extra, field, message] of cases) {
    t.log(JSON.stringify(extra));
    await assertRejectedWithoutWrite(t, weir, () => api.post(SESSIONS, { ...sessionRequest(), ...(extra as object) }), {
      field,
      ...(message ? { message } : {}),
    });
  }
  t.is((await api.get<Page<Session>>(SESSIONS)).body.count, 0);
});

test("a customerId that is no customer of the tenant (unknown, deleted, another organization's or environment's) is a 400 naming customerId for sessions and invoices, and writes nothing", async (t) => {
  const { weir, api, live } = await setup(t);
  const other = await createMerchant(weir.url, 'Other Shop');
  const own = await createCustomer(api, 'own@example.com');
  const deleted = await createCustomer(api, 'gone@example.com');
  t.is((await api.delete(`/api/v1/customers/${deleted}`)).status, 200);
  const refused: [string, string][] = [
    ['unknown', '7b0c7f1e-1c1a-4c5e-9d7e-111111111111'],
    ['not an id', 'cus_nope'],
    ['deleted', deleted],
    ["another organization's", await createCustomer(other.api, 'theirs@example.com')],
    ["the live environment's", await createCustomer(live, 'live@example.com')],
  ];
  const subscription = {
    mode: 'subscription',
    successUrl: 'https://shop.example/welcome',
    lineItems: {
      data: [
        {
          priceData: { currency: 'usdc', unitAmount: '100000000', interval: 'month', productData: { name: 'Plan' } },
          quantity: 1,
        },
      ],
    },
  };
  const invoice = {
    lineItems: {
      data: [{ priceData: { currency: 'usdc', unitAmount: '100000000', productData: { name: 'Hour' } }, quantity: 1 }],
    },
  };
  for (const [what, customerId] of refused) {
    t.log(what);
    const message = new RegExp(`^customerId: customer ${customerId} does not exist$`);
    const expected = { field: 'customerId', code: 'resource_missing', message };
    const body = await assertRejectedWithoutWrite(
      t,
      weir,
      () => api.post(SESSIONS, { ...sessionRequest(), customerId }),
      expected,
    );
    t.deepEqual(body, {
      statusCode: 400,
      error: 'Bad Request',
      message: `customerId: customer ${customerId} does not exist`,
      code: 'resource_missing',
    });
    await assertRejectedWithoutWrite(t, weir, () => api.post(SESSIONS, { ...subscription, customerId }), expected);
    // customerData cannot stand in for a customerId that names no one.
    await assertRejectedWithoutWrite(
      t,
      weir,
      () =>
        api.post(SESSIONS, {
          ...subscription,
          customerId,
          customerData: { email: 'pat@example.com' },
          customerCreation: 'always',
        }),
      expected,
    );
    await assertRejectedWithoutWrite(t, weir, () => api.post('/api/v1/invoices', { ...invoice, customerId }), expected);
  }
  await assertRejectedWithoutWrite(t, weir, () => api.post(SESSIONS, { ...sessionRequest(), customerId: '' }), {
    field: 'customerId',
    code: 'parameter_invalid_string_empty',
  });
  t.is((await api.get<Page<Session>>(SESSIONS)).body.count, 0);
  t.is((await api.get<Page<Customer>>('/api/v1/customers')).body.count, 1);

  // A refused request with an Idempotency-Key records no answer: the key is free again.
  const key = { 'Idempotency-Key': 'order-77' };
  assertError(t, await api.post(SESSIONS, { ...sessionRequest(), customerId: deleted }, key), 400, {
    field: 'customerId',
    code: 'resource_missing',
  });
  const retried = await api.post<SessionCustomer>(SESSIONS, { ...sessionRequest(), customerId: own }, key);
  t.is(retried.status, 200, JSON.stringify(retried.body));
  t.is(retried.headers.get('idempotent-replayed'), null);

  // The tenant's own customer is taken, in payment and subscription sessions and on invoices.
  t.like(retried.body, { customerId: own, customerCreation: 'if_required' });
  const subscribed = await api.post<SessionCustomer>(SESSIONS, { ...subscription, customerId: own });
  t.is(subscribed.status, 200, JSON.stringify(subscribed.body));
  t.is(subscribed.body.customerId, own);
  t.deepEqual(
    (await api.get<Page<SessionCustomer>>(`${SESSIONS}?customerId=${own}`)).body.data.map((s) => s.id).sort(),
    [retried.body.id, subscribed.body.id].sort(),
  );
  const draft = await api.post<{ id: string; customerId: string }>('/api/v1/invoices', { ...invoice, customerId: own });
  t.is(draft.status, 200, JSON.stringify(draft.body));
  t.is(draft.body.customerId, own);
  assertError(t, await api.put(`/api/v1/invoices/${draft.body.id}`, { customerId: deleted }), 400, {
    field: 'customerId',
    code: 'resource_missing',
  });

  // An invoice keeps its customer once written: deleting the customer leaves its pay page working.
  await api.post(`/api/v1/invoices/${draft.body.id}/finalize`);
  t.is((await api.delete(`/api/v1/customers/${own}`)).status, 200);
  const payPage = await fetch(`${weir.url}/invoices/${draft.body.id}/pay`, { redirect: 'manual' });
  t.is(payPage.status, 302);
  const invoiceSession = (
    await api.get<SessionCustomer>(`${SESSIONS}/${payPage.headers.get('location')!.split('/').pop()!}`)
  ).body;
  t.is(invoiceSession.customerId, own);
});
