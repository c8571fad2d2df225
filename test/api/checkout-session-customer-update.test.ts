import test from 'ava';
import type { Weir } from '../../src/app/start-weir.ts';
import { customerCheckoutUpdates } from '../../src/workflows/customer-checkout-updates.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import {
  assertRejectedWithoutWrite,
  createCustomer,
  forgetWorkflows,
  payInFull,
  restartableWeir,
  workflowSettled,
  type Api,
  type Page,
  type Session,
} from './helpers.ts';

/** The reference's `customerUpdate` on a session as the API shows it. */
type CustomerUpdate = { address: string; name: string; shipping: string };
type SessionWithUpdate = Session & { customerId: string | null; customerUpdate?: CustomerUpdate };
type Address = {
  line1: string | null;
  line2: string | null;
  city: string | null;
  state: string | null;
  postalCode: string | null;
  country: string | null;
};
type Customer = {
  id: string;
  email: string;
  name: string | null;
  address: Address | null;
  shipping?: unknown;
  updatedAt: string;
};

const SESSIONS = '/api/v1/checkout/sessions';
const ADDRESS: Address = {
  line1: '1 Harbour Road',
  line2: null,
  city: 'Lisbon',
  state: null,
  postalCode: '1100-001',
  country: 'PT',
};
const ALL_AUTO = { address: 'auto', name: 'auto', shipping: 'auto' };

async function setup(t: Parameters<typeof startTestWeir>[0]) {
  const weir = await startTestWeir(t);
  return { weir, ...(await createMerchant(weir.url)) };
}

const getCustomer = async (api: Api, id: string) => (await api.get<Customer>(`/api/v1/customers/${id}`)).body;

/** A session of `customerId` prefilled with `customerData`, created with `customerUpdate`. */
async function sessionFor(
  t: Parameters<typeof startTestWeir>[0],
  api: Api,
  customerId: string,
  customerUpdate: object,
  customerData: object = {},
) {
  const created = await api.post<SessionWithUpdate>(SESSIONS, {
    ...sessionRequest(),
    customerId,
    customerUpdate,
    customerData,
  });
  t.is(created.status, 200, JSON.stringify(created.body));
  return created.body;
}

/** The `CustomerUpdatedFromCheckout` events of a customer: the session each took, and who recorded it. */
async function checkoutUpdates(weir: Pick<Weir, 'eventStore'>, customerId: string) {
  return (await weir.eventStore.readStream(`customer-${customerId}`))
    .filter((e) => e.type === 'CustomerUpdatedFromCheckout')
    .map((e) => ({
      checkoutSessionId: (e.data as { checkoutSessionId: string }).checkoutSessionId,
      actor: e.metadata.actor,
    }));
}

/** Every event has been projected and the customer checkout updates workflow has run what it decided. */
const customersSettled = (weir: Pick<Weir, 'eventStore' | 'projections' | 'readStore' | 'workflows'>) =>
  workflowSettled(weir, customerCheckoutUpdates.name);

test('a bad customerUpdate, or one without customerId, is a 400 naming the field, and writes nothing', async (t) => {
  const { weir, api } = await setup(t);
  const customerId = await createCustomer(api);
  const cases: [object, string, RegExp][] = [
    [{ customerId, customerUpdate: 'auto' }, 'customerUpdate', /must be an object/],
    [{ customerId, customerUpdate: ['name'] }, 'customerUpdate', /must be an object/],
    [
      { customerId, customerUpdate: { email: 'auto' } },
      'customerUpdate.email',
      /not a customer update field; use address, name, shipping/,
    ],
    [{ customerId, customerUpdate: { name: 'always' } }, 'customerUpdate.name', /must be one of auto, never/],
    [{ customerId, customerUpdate: { address: true } }, 'customerUpdate.address', /must be one of auto, never/],
    [
      { customerId, customerUpdate: { name: 'auto', shipping: 'sometimes' } },
      'customerUpdate.shipping',
      /must be one of auto, never/,
    ],
    [{ customerUpdate: { name: 'auto' } }, 'customerUpdate', /only allowed with customerId/],
    [
      { customerUpdate: { name: 'never' }, customerData: { email: 'pat@example.com' }, customerCreation: 'always' },
      'customerUpdate',
      /only allowed with customerId/,
    ],
    [{ customerUpdate: {} }, 'customerUpdate', /only allowed with customerId/],
  ];
  for (const [extra, field, message] of cases) {
    t.log(JSON.stringify(extra));
    await assertRejectedWithoutWrite(t, weir, () => api.post(SESSIONS, { ...sessionRequest(), ...extra }), {
      field,
      message,
    });
  }
  t.is((await api.get<Page<Session>>(SESSIONS)).body.count, 0);
});

test('customerUpdate is stored and returned with every part spelled out (left out: never), in create, read, list and webhooks; a session without it has none', async (t) => {
  const { weir, api } = await setup(t);
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  t.is(
    (
      await api.post('/api/v1/webhook-endpoints', {
        description: 'sessions',
        url: receiver.url,
        enabledEvents: { events: ['checkout_session.completed'] },
      })
    ).status,
    200,
  );
  const customerId = await createCustomer(api);

  const created = await sessionFor(t, api, customerId, { name: 'auto' });
  const expected = { address: 'never', name: 'auto', shipping: 'never' };
  t.deepEqual(created.customerUpdate, expected);
  t.deepEqual((await api.get<SessionWithUpdate>(`${SESSIONS}/${created.id}`)).body.customerUpdate, expected);
  t.deepEqual(
    (await api.get<Page<SessionWithUpdate>>(SESSIONS)).body.data.map((s) => s.customerUpdate),
    [expected],
  );
  const [recorded] = await weir.eventStore.readStream(`checkout_session-${created.id}`);
  t.deepEqual((recorded!.data as { session: { customerUpdate: unknown } }).session.customerUpdate, expected);

  const everything = await sessionFor(t, api, customerId, ALL_AUTO);
  t.deepEqual(everything.customerUpdate, ALL_AUTO);
  const none = await api.post<SessionWithUpdate>(SESSIONS, { ...sessionRequest(), customerId, customerUpdate: null });
  t.false('customerUpdate' in none.body, 'null is as good as leaving it out');
  const plain = await api.post<SessionWithUpdate>(SESSIONS, sessionRequest());
  t.false('customerUpdate' in plain.body);
  t.false('customerUpdate' in (await api.get<SessionWithUpdate>(`${SESSIONS}/${plain.body.id}`)).body);

  await payInFull(weir, api, created);
  const hooks = await receiver.waitFor((all) => all.length >= 1);
  const payload = JSON.parse(hooks[0]!.body) as { type: string; data: { object: SessionWithUpdate } };
  t.like(payload, { type: 'checkout_session.completed', data: { object: { id: created.id } } });
  t.deepEqual(payload.data.object.customerUpdate, expected);
});

test('a completed session updates its customer with what it collected, for the auto parts only', async (t) => {
  const { weir, api } = await setup(t);
  const customerId = await createCustomer(api, 'pat@example.com');
  const before = await getCustomer(api, customerId);
  t.like(before, { name: null, address: null });

  // name auto, address never: the name is taken, the address is not.
  const named = await sessionFor(
    t,
    api,
    customerId,
    { name: 'auto', address: 'never' },
    { name: 'Pat Payer', address: ADDRESS },
  );
  await payInFull(weir, api, named);
  const afterName = await eventually(async () => {
    const c = await getCustomer(api, customerId);
    return c.name === 'Pat Payer' ? c : undefined;
  }, 'the name to be taken');
  t.like(afterName, { email: 'pat@example.com', name: 'Pat Payer', address: null });
  t.false('shipping' in afterName);
  t.deepEqual(await checkoutUpdates(weir, customerId), [
    { checkoutSessionId: named.id, actor: 'system:customer-update' },
  ]);

  // address auto, name never (left out): the billing address is taken, the name stays.
  const addressed = await sessionFor(
    t,
    api,
    customerId,
    { address: 'auto' },
    { name: 'Somebody Else', address: ADDRESS },
  );
  await payInFull(weir, api, addressed);
  const afterAddress = await eventually(async () => {
    const c = await getCustomer(api, customerId);
    return c.address ? c : undefined;
  }, 'the address to be taken');
  t.like(afterAddress, { name: 'Pat Payer', address: ADDRESS });

  // Everything auto, but nothing collected: nothing is updated.
  const empty = await sessionFor(t, api, customerId, ALL_AUTO);
  await payInFull(weir, api, empty);
  // All never: nothing is updated either.
  const never = await sessionFor(
    t,
    api,
    customerId,
    { address: 'never', name: 'never', shipping: 'never' },
    { name: 'Not Taken' },
  );
  await payInFull(weir, api, never);
  await customersSettled(weir);
  t.deepEqual(await getCustomer(api, customerId), afterAddress);
  t.deepEqual(
    (await checkoutUpdates(weir, customerId)).map((u) => u.checkoutSessionId),
    [named.id, addressed.id],
  );
});

test("a customer takes a session's details once: a restart replaying the whole log does not apply them again over a later change", async (t) => {
  const clock = createManualClock(Date.now());
  const weir = await restartableWeir(t, clock);
  const first = await weir.start();
  const { api, testSecretKey } = await createMerchant(first.url);
  const customerId = await createCustomer(api, 'pat@example.com');
  const session = await sessionFor(t, api, customerId, ALL_AUTO, { name: 'Pat Payer', address: ADDRESS });
  await payInFull(first, api, session);
  await eventually(
    async () => ((await getCustomer(api, customerId)).name === 'Pat Payer' ? true : undefined),
    'the name to be taken',
  );
  await customersSettled(first);
  // The merchant changes the customer afterwards: that change stands.
  t.is((await api.put(`/api/v1/customers/${customerId}`, { name: 'Patricia Payer', address: null })).status, 200);
  const changed = await getCustomer(api, customerId);
  await first.stop();

  // The workflow replays the whole log at this start (its states forgotten, as after a change of its version).
  const logged = await forgetWorkflows(weir.dataDir);
  const second = await weir.start();
  const again = apiClient(second.url, testSecretKey);
  await customersSettled(second);
  t.deepEqual(await getCustomer(again, customerId), changed);
  t.like(changed, { name: 'Patricia Payer', address: null });
  t.deepEqual(
    (await checkoutUpdates(second, customerId)).map((u) => u.checkoutSessionId),
    [session.id],
  );
  t.is((await second.eventStore.readAll(null, 100_000)).length, logged, 'the replay appended nothing');
});

test('a customer deleted before its session completes is left alone, while another customer is updated', async (t) => {
  const { weir, api } = await setup(t);
  const kept = await createCustomer(api, 'kept@example.com');
  const gone = await createCustomer(api, 'gone@example.com');
  const keptSession = await sessionFor(t, api, kept, { name: 'auto' }, { name: 'Kept Payer' });
  const goneSession = await sessionFor(t, api, gone, { name: 'auto' }, { name: 'Gone Payer' });
  t.deepEqual(goneSession.customerUpdate, { address: 'never', name: 'auto', shipping: 'never' });
  t.is((await api.delete(`/api/v1/customers/${gone}`)).status, 200);

  const paid = await payInFull(weir, api, goneSession);
  t.is(paid.status, 'complete');
  await payInFull(weir, api, keptSession);
  await customersSettled(weir);
  t.like(await getCustomer(api, kept), { name: 'Kept Payer' });
  t.deepEqual(await checkoutUpdates(weir, gone), []);
  const goneEvents = (await weir.eventStore.readStream(`customer-${gone}`)).map((e) => e.type);
  t.deepEqual(goneEvents, ['CustomerCreated', 'CustomerDeleted']);
  t.is((await api.get(`/api/v1/customers/${gone}`)).status, 404);
});
