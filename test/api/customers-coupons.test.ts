import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Koa from 'koa';
import type Router from '@koa/router';
import test, { type ExecutionContext } from 'ava';
import {
  CLAIM_ABANDONED_AFTER_MS,
  promotionCodeClaimAggregate,
  promotionCodeClaimId,
} from '../../src/actors/promotion-code-claim.ts';
import { couponAggregate } from '../../machines/coupon.aggregate.ts';
import { createCommandHandler } from '../../src/actors/command-handler.ts';
import { createTestRail } from '../../src/chain-ingest/test-rail.ts';
import { createSqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { couponsProjection, findPromotionCode } from '../../src/projections/coupons.projection.ts';
import { customersProjection } from '../../src/projections/customers.projection.ts';
import { createProjectionRunner } from '../../src/projections/projection-runner.ts';
import { tenancyProjection } from '../../src/projections/tenancy.projection.ts';
import type { ApiDeps, ApiState } from '../../src/read-api/api-context.ts';
import { compose } from '../../src/read-api/compose.ts';
import { authMiddleware, errorMiddleware, jsonBodyMiddleware } from '../../src/read-api/middleware.ts';
import { couponRoutes } from '../../src/read-api/routes/coupons.ts';
import { customerRoutes } from '../../src/read-api/routes/customers.ts';
import { openReadStore } from '../../src/read-store/open-read-store.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { createOrganization } from '../../src/tenancy/create-organization.ts';
import { createSecretBox } from '../../src/tenancy/secrets.ts';
import { apiClient } from '../support/api-client.ts';
import { assertError, type Page } from './helpers.ts';

/**
 * Customers and coupons over HTTP, on a small Koa app with the real stores, projection runner,
 * auth and body middleware (the same order as `createApiApp`), until they are mounted there.
 */
async function startApp(t: ExecutionContext) {
  const dir = await mkdtemp(join(tmpdir(), 'weir-coupons-api-'));
  const eventStore = createSqliteEventStore({ path: join(dir, 'events.sqlite3') });
  const readStore = await openReadStore({ indexedFields: ['organizationId', 'status'] });
  const clock = createManualClock(Date.parse('2026-01-01T00:00:00Z'));
  const commands = createCommandHandler({ eventStore, clock });
  const projections = createProjectionRunner({
    eventStore,
    readStore,
    projections: [tenancyProjection, customersProjection, couponsProjection],
  });
  await projections.start();
  const deps: ApiDeps = {
    clock,
    eventStore,
    readStore,
    commands,
    projections,
    rail: createTestRail(),
    secretBox: createSecretBox(randomBytes(32)),
    publicUrl: 'http://127.0.0.1',
  };
  const app = new Koa<ApiState>();
  app.silent = true;
  const mounted = (...routers: Router<ApiState>[]) =>
    routers.flatMap((r) => [r.routes(), r.allowedMethods()] as unknown as Koa.Middleware<ApiState>[]);
  app.use(errorMiddleware());
  app.use(
    compose<ApiState>([
      authMiddleware(readStore),
      jsonBodyMiddleware(),
      ...mounted(customerRoutes(deps), couponRoutes(deps)),
    ]),
  );
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.teardown(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await projections.stop();
    await eventStore.close();
    await readStore.close();
    await rm(dir, { recursive: true, force: true });
  });
  const merchant = async (name: string) => {
    const org = await createOrganization(commands, name);
    await projections.waitFor(org.position);
    return { ...org, api: apiClient(url, org.keys.test.secretKey), live: apiClient(url, org.keys.live.secretKey) };
  };
  const logLength = async () => (await eventStore.readAll(null, 100_000)).length;
  return { url, clock, commands, readStore, projections, merchant, logLength };
}

type Address = Record<string, string | null>;
/** The reference's customer `shipping` (FullAddressDetailDto). */
type Shipping = {
  name: string | null;
  email: string | null;
  phone: string | null;
  organizationName: string | null;
  address: Address | null;
};
type TaxId = {
  id: string;
  customerId: string;
  name: string | null;
  value: string;
  country: string | null;
  createdAt: string;
  updatedAt: string;
};
type Customer = {
  id: string;
  email: string;
  name: string | null;
  phone: string | null;
  metadata: Record<string, string>;
  address: Address | null;
  shipping?: Shipping | null;
  taxIds: { object: string; data: TaxId[] };
  customerNumber: string;
  createdAt: string;
  updatedAt: string;
};
type Coupon = {
  id: string;
  name: string;
  status: string;
  isEnable: boolean;
  isArchived: boolean;
  timesRedeemed: number;
  percentOff: number | null;
  amountOff: string | null;
  maxRedemptions: number | null;
  redeemBy: string | null;
  promotionCodes: {
    id: string;
    code: string;
    couponId: string;
    isActive: boolean;
    timesRedeemed: number;
    maxRedemptions: number | null;
  }[];
};

// --- customers ----------------------------------------------------------------------------

test('customers: create, read, update, list by email and ids, delete', async (t) => {
  const weir = await startApp(t);
  const { api } = await weir.merchant('Shop');
  const created = await api.post<Customer>('/api/v1/customers', {
    email: 'Ada@Example.com',
    name: 'Ada',
    phone: '+44 20 7946 0000',
    metadata: { tier: 'gold', n: 3 },
    address: { line1: '1 Main St', city: 'London', country: 'gb' },
  });
  t.is(created.status, 200, JSON.stringify(created.body));
  t.like(created.body, { email: 'Ada@Example.com', name: 'Ada', metadata: { tier: 'gold', n: '3' } });
  t.is(created.body.address?.country, 'GB');
  t.is(created.body.customerNumber.length, 8);
  t.false('emailLower' in created.body);
  const id = created.body.id;
  t.deepEqual((await api.get<Customer>(`/api/v1/customers/${id}`)).body, created.body);

  const other = await api.post<Customer>('/api/v1/customers', { email: 'bob@example.com' });
  const byEmail = await api.get<Page<Customer>>('/api/v1/customers?email=ADA@example.COM');
  t.deepEqual(
    byEmail.body.data.map((c) => c.id),
    [id],
  );
  const byIds = await api.get<Page<Customer>>(`/api/v1/customers?ids=${id},${other.body.id}`);
  t.is(byIds.body.count, 2);
  const all = await api.get<Page<Customer>>('/api/v1/customers?createdAt[gte]=2026-01-01');
  t.is(all.body.count, 2);

  const updated = await api.put<Customer>(`/api/v1/customers/${id}`, {
    name: 'Ada L.',
    phone: null,
    metadata: { tier: 'platinum' },
  });
  t.is(updated.status, 200, JSON.stringify(updated.body));
  t.like(updated.body, { name: 'Ada L.', phone: null, email: 'Ada@Example.com', metadata: { tier: 'platinum' } });

  const deleted = await api.delete<{ statusCode: number; message: string }>(`/api/v1/customers/${id}`);
  t.is(deleted.status, 200);
  assertError(t, await api.get(`/api/v1/customers/${id}`), 404, { code: 'resource_missing' });
  assertError(t, await api.delete(`/api/v1/customers/${id}`), 404);
  t.deepEqual(
    (await api.get<Page<Customer>>('/api/v1/customers')).body.data.map((c) => c.id),
    [other.body.id],
  );
});

test('customers: bad input is a 400 naming the field and writes nothing', async (t) => {
  const weir = await startApp(t);
  const { api } = await weir.merchant('Shop');
  const before = await weir.logLength();
  assertError(t, await api.post('/api/v1/customers', { name: 'No email' }), 400, {
    field: 'email',
    code: 'parameter_missing',
  });
  assertError(t, await api.post('/api/v1/customers', { email: 'not-an-email' }), 400, {
    field: 'email',
    code: 'email_invalid',
  });
  assertError(t, await api.post('/api/v1/customers', { email: 'a@b.co', metadata: { k: { nested: true } } }), 400, {
    field: 'metadata.k',
  });
  assertError(
    t,
    await api.post('/api/v1/customers', {
      email: 'a@b.co',
      metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])),
    }),
    400,
    { field: 'metadata' },
  );
  assertError(t, await api.post('/api/v1/customers', { email: 'a@b.co', address: { street: 'x' } }), 400, {
    field: 'address.street',
  });
  assertError(t, await api.post('/api/v1/customers', { email: 'a@b.co', phone: 'call me' }), 400, { field: 'phone' });
  t.is(await weir.logLength(), before);
  const c = await api.post<Customer>('/api/v1/customers', { email: 'a@b.co' });
  assertError(t, await api.put(`/api/v1/customers/${c.body.id}`, { email: 'nope' }), 400, { field: 'email' });
});

test("customers: the list filters by the reference's visibility (10 dashboard, 20 API only), where it answered every customer; any other value is a 400 naming it", async (t) => {
  const weir = await startApp(t);
  const { api } = await weir.merchant('Shop');
  const shown = (await api.post<Customer>('/api/v1/customers', { email: 'shown@example.com' })).body;
  const hidden = (await api.post<Customer>('/api/v1/customers', { email: 'api@example.com', visibility: 20 })).body;
  const listed = async (query: string) => {
    const answer = await api.get<Page<Customer>>(`/api/v1/customers?${query}`);
    t.is(answer.status, 200, JSON.stringify(answer.body));
    return answer.body.data.map((c) => c.id);
  };
  t.deepEqual(await listed('visibility=10'), [shown.id]);
  t.deepEqual(await listed('visibility=20'), [hidden.id]);
  t.deepEqual((await listed('')).sort(), [shown.id, hidden.id].sort());
  assertError(t, await api.get('/api/v1/customers?visibility=30'), 400, { field: 'visibility' });
});

test('customers: shipping is taken on create, returned by read and list, replaced whole by PUT, and cleared with null', async (t) => {
  const weir = await startApp(t);
  const { api } = await weir.merchant('Shop');
  const created = await api.post<Customer>('/api/v1/customers', {
    email: 'ada@example.com',
    name: 'Ada',
    shipping: {
      name: 'Ada at work',
      email: 'desk@example.com',
      phone: '+351 21 000 0000',
      organizationName: 'Quay Ltd',
      address: { line1: '9 Quay', city: 'Porto', country: 'pt' },
    },
  });
  t.is(created.status, 200, JSON.stringify(created.body));
  const shipping: Shipping = {
    name: 'Ada at work',
    email: 'desk@example.com',
    phone: '+351 21 000 0000',
    organizationName: 'Quay Ltd',
    address: { line1: '9 Quay', line2: null, city: 'Porto', state: null, postalCode: null, country: 'PT' },
  };
  t.deepEqual(created.body.shipping, shipping);
  const id = created.body.id;
  const read = async () => (await api.get<Customer>(`/api/v1/customers/${id}`)).body;
  const listed = async () => (await api.get<Page<Customer>>(`/api/v1/customers?ids=${id}`)).body.data[0];
  t.deepEqual(await read(), created.body);
  t.deepEqual(await listed(), created.body);

  // Leaving it out of an update leaves it; giving it replaces it whole (a part left out is null).
  t.deepEqual((await api.put<Customer>(`/api/v1/customers/${id}`, { name: 'Ada L.' })).body.shipping, shipping);
  const replaced = await api.put<Customer>(`/api/v1/customers/${id}`, {
    shipping: { name: 'Ada at home', address: { line1: '1 Main St', country: 'GB' } },
  });
  t.is(replaced.status, 200, JSON.stringify(replaced.body));
  const home: Shipping = {
    name: 'Ada at home',
    email: null,
    phone: null,
    organizationName: null,
    address: { line1: '1 Main St', line2: null, city: null, state: null, postalCode: null, country: 'GB' },
  };
  t.deepEqual(replaced.body.shipping, home);
  t.deepEqual((await read()).shipping, home);
  t.deepEqual((await listed())?.shipping, home);

  const cleared = await api.put<Customer>(`/api/v1/customers/${id}`, { shipping: null });
  t.is(cleared.status, 200, JSON.stringify(cleared.body));
  t.is(cleared.body.shipping, null);
  t.is((await read()).shipping, null);
  t.is((await listed())?.shipping, null);

  // A customer never given one has none, and clearing it writes nothing.
  const plain = await api.post<Customer>('/api/v1/customers', { email: 'bob@example.com', shipping: null });
  t.is(plain.status, 200, JSON.stringify(plain.body));
  t.false('shipping' in plain.body);
  const before = await weir.logLength();
  t.false('shipping' in (await api.put<Customer>(`/api/v1/customers/${plain.body.id}`, { shipping: null })).body);
  t.is(await weir.logLength(), before);
});

test("customers: the reference's taxIds are kept on create, returned by read and list, replaced whole by PUT (a kept one keeps its id), and cleared with null", async (t) => {
  const weir = await startApp(t);
  const { api } = await weir.merchant('Shop');
  const vat = { name: 'eu_vat', value: 'DE123456789', country: 'de' };
  const created = await api.post<Customer>('/api/v1/customers', {
    email: 't@ex.com',
    taxIds: { object: 'list', data: [vat, { value: 'DE123' }] },
  });
  t.is(created.status, 200, JSON.stringify(created.body));
  const id = created.body.id;
  const at = '2026-01-01T00:00:00.000Z';
  t.like(created.body.taxIds, {
    object: 'list',
    data: [
      { customerId: id, name: 'eu_vat', value: 'DE123456789', country: 'DE', createdAt: at, updatedAt: at },
      { customerId: id, name: null, value: 'DE123', country: null },
    ],
  });
  const [kept, dropped] = created.body.taxIds.data;
  t.truthy(kept?.id);
  t.not(kept?.id, dropped?.id);
  t.deepEqual((await api.get<Customer>(`/api/v1/customers/${id}`)).body.taxIds, created.body.taxIds);
  t.deepEqual((await api.get<Page<Customer>>('/api/v1/customers')).body.data[0]?.taxIds, created.body.taxIds);

  // Without taxIds, or with an empty list, a customer has none.
  for (const taxIds of [undefined, { object: 'list', data: [] }, {}, null]) {
    const plain = await api.post<Customer>('/api/v1/customers', { email: 'p@ex.com', taxIds });
    t.is(plain.status, 200, JSON.stringify(plain.body));
    t.deepEqual(plain.body.taxIds, { object: 'list', data: [] });
  }

  weir.clock.advanceBy(60_000);
  const replaced = await api.put<Customer>(`/api/v1/customers/${id}`, {
    taxIds: { data: [{ value: 'PT999' }, vat] },
  });
  t.is(replaced.status, 200, JSON.stringify(replaced.body));
  t.deepEqual(
    replaced.body.taxIds.data.map((x) => x.value),
    ['PT999', 'DE123456789'],
  );
  t.deepEqual(replaced.body.taxIds.data[1], kept);
  t.is(replaced.body.taxIds.data[0]?.createdAt, '2026-01-01T00:01:00.000Z');
  const before = await weir.logLength();
  t.deepEqual((await api.put<Customer>(`/api/v1/customers/${id}`, { name: 'T' })).body.taxIds, replaced.body.taxIds);
  t.is(await weir.logLength(), before + 1, 'a PUT without taxIds leaves them');
  t.deepEqual((await api.put<Customer>(`/api/v1/customers/${id}`, { taxIds: null })).body.taxIds, {
    object: 'list',
    data: [],
  });
});

test('customers: a bad shipping, or a bad taxIds element, is a 400 naming the exact field, on create and update, and writes nothing', async (t) => {
  const weir = await startApp(t);
  const { api } = await weir.merchant('Shop');
  const c = await api.post<Customer>('/api/v1/customers', { email: 'a@b.co' });
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ shipping: 'Porto' }, 'shipping', /must be an object/],
    [{ shipping: ['9 Quay'] }, 'shipping', /must be an object/],
    [
      { shipping: { street: '9 Quay' } },
      'shipping.street',
      /not a shipping field; use name, email, phone, organizationName, address/,
    ],
    [{ shipping: { name: 7 } }, 'shipping.name', /must be a string/],
    [{ shipping: { organizationName: 'x'.repeat(251) } }, 'shipping.organizationName', /at most 250/],
    [{ shipping: { email: 'nope' } }, 'shipping.email', /email address/],
    [{ shipping: { phone: 'call me' } }, 'shipping.phone', /phone number/],
    [{ shipping: { address: 'Porto' } }, 'shipping.address', /must be an object/],
    [{ shipping: { address: { zip: '4000' } } }, 'shipping.address.zip', /not an address field/],
    [{ shipping: { address: { country: 'Portugal' } } }, 'shipping.address.country', /at most 2|two-letter/],
    [{ shipping: { address: { country: 'P1' } } }, 'shipping.address.country', /two-letter/],
    [{ taxIds: [{ value: 'PT1' }] }, 'taxIds', /must be an object/],
    [{ taxIds: { object: 'array', data: [] } }, 'taxIds.object', /must be "list"/],
    [{ taxIds: { data: { value: 'PT1' } } }, 'taxIds.data', /must be an array/],
    [{ taxIds: { data: [{ value: 'PT1' }, 'PT2'] } }, 'taxIds.data[1]', /must be an object/],
    [{ taxIds: { data: [{ name: 'eu_vat' }] } }, 'taxIds.data[0].value', /required/],
    [{ taxIds: { data: [{ value: '' }] } }, 'taxIds.data[0].value', /empty|at least/],
    [{ taxIds: { data: [{ value: 'x'.repeat(101) }] } }, 'taxIds.data[0].value', /at most 100/],
    [{ taxIds: { data: [{ value: 'PT1', type: 'eu_vat' }] } }, 'taxIds.data[0].type', /not a tax id field/],
    [{ taxIds: { data: [{ value: 'PT1', country: 'PRT' }] } }, 'taxIds.data[0].country', /at most 2|two-letter/],
    [{ taxIds: { data: [{ value: 'PT1' }, { value: 'PT1' }] } }, 'taxIds.data[1]', /repeats the tax id at 0/],
    [{ taxIds: { data: Array.from({ length: 26 }, (_, i) => ({ value: `PT${i}` })) } }, 'taxIds.data', /at most 25/],
  ];
  const before = await weir.logLength();
  for (const [extra, field, message] of cases) {
    t.log(JSON.stringify(extra).slice(0, 100));
    assertError(t, await api.post('/api/v1/customers', { email: 'new@b.co', ...extra }), 400, { field, message });
    assertError(t, await api.put(`/api/v1/customers/${c.body.id}`, extra), 400, { field, message });
  }
  t.is(await weir.logLength(), before);
  t.false('shipping' in (await api.get<Customer>(`/api/v1/customers/${c.body.id}`)).body);
  t.is((await api.get<Page<Customer>>('/api/v1/customers')).body.count, 1);
});

test('customers are tenant-scoped: another organization or environment sees a 404', async (t) => {
  const weir = await startApp(t);
  const shop = await weir.merchant('Shop');
  const rival = await weir.merchant('Rival');
  const c = await shop.api.post<Customer>('/api/v1/customers', { email: 'a@b.co' });
  assertError(t, await rival.api.get(`/api/v1/customers/${c.body.id}`), 404);
  assertError(t, await shop.live.get(`/api/v1/customers/${c.body.id}`), 404);
  assertError(t, await rival.api.put(`/api/v1/customers/${c.body.id}`, { name: 'x' }), 404);
  assertError(t, await rival.api.delete(`/api/v1/customers/${c.body.id}`), 404);
  t.is((await rival.api.get<Page<Customer>>('/api/v1/customers')).body.count, 0);
  assertError(t, await apiClient(weir.url).get('/api/v1/customers'), 401);
});

// --- coupons ------------------------------------------------------------------------------

const couponBody = (code = 'SUMMER10', extra: Record<string, unknown> = {}) => ({
  name: 'Summer',
  percentOff: 10,
  maxRedemptions: 2,
  redeemBy: '2026-06-01T00:00:00Z',
  promotionCodeData: { data: [{ code }] },
  ...extra,
});

test('coupons: create with a promotion code, read, list, update, disable, enable, archive', async (t) => {
  const weir = await startApp(t);
  const { api } = await weir.merchant('Shop');
  const created = await api.post<Coupon>('/api/v1/coupons', couponBody());
  t.is(created.status, 200, JSON.stringify(created.body));
  t.like(created.body, {
    name: 'Summer',
    status: 'active',
    isEnable: true,
    isArchived: false,
    timesRedeemed: 0,
    percentOff: 10,
    amountOff: null,
    redeemBy: '2026-06-01T00:00:00.000Z',
  });
  t.like(created.body.promotionCodes[0], {
    code: 'SUMMER10',
    couponId: created.body.id,
    isActive: true,
    timesRedeemed: 0,
  });
  const id = created.body.id;
  t.deepEqual((await api.get<Coupon>(`/api/v1/coupons/${id}`)).body, created.body);

  const amount = await api.post<Coupon>('/api/v1/coupons', {
    name: 'Five off',
    amountOff: '500000000',
    currency: 'usdc',
    promotionCodes: [{ code: 'FIVE', maxRedemptions: 1 }],
  });
  t.is(amount.status, 200, JSON.stringify(amount.body));
  t.like(amount.body, { amountOff: '500000000', percentOff: null });

  t.is((await api.get<Page<Coupon>>('/api/v1/coupons')).body.count, 2);
  t.deepEqual(
    (await api.get<Page<Coupon>>('/api/v1/coupons?searchText=summ')).body.data.map((c) => c.id),
    [id],
  );
  t.deepEqual(
    (await api.get<Page<Coupon>>(`/api/v1/coupons?ids=${amount.body.id}`)).body.data.map((c) => c.id),
    [amount.body.id],
  );

  const updated = await api.put<Coupon>(`/api/v1/coupons/${id}`, {
    name: 'Summer sale',
    maxRedemptions: 5,
    metadata: { campaign: 's26' },
  });
  t.like(updated.body, { name: 'Summer sale', maxRedemptions: 5, status: 'active' });

  const off = await api.post<Coupon>(`/api/v1/coupons/${id}/disable`);
  t.like(off.body, { status: 'disabled', isEnable: false });
  t.false(off.body.promotionCodes[0]!.isActive);
  t.deepEqual(
    (await api.get<Page<Coupon>>('/api/v1/coupons?isEnable=false')).body.data.map((c) => c.id),
    [id],
  );
  const on = await api.post<Coupon>(`/api/v1/coupons/${id}/enable`);
  t.like(on.body, { status: 'active', isEnable: true });
  const archived = await api.post<Coupon>(`/api/v1/coupons/${id}/archive`);
  t.like(archived.body, { isArchived: true, isEnable: false });
  t.deepEqual(
    (await api.get<Page<Coupon>>('/api/v1/coupons?isArchived=true')).body.data.map((c) => c.id),
    [id],
  );
  assertError(t, await api.post(`/api/v1/coupons/${id}/enable`), 400, { code: 'coupon_archived' });
  t.is((await api.post(`/api/v1/coupons/${id}/archive`)).status, 200, 'archiving again is a no-op');
});

test('coupons: a promotion code is unique per tenant regardless of case; other tenants may reuse it', async (t) => {
  const weir = await startApp(t);
  const shop = await weir.merchant('Shop');
  const rival = await weir.merchant('Rival');
  t.is((await shop.api.post('/api/v1/coupons', couponBody('Welcome'))).status, 200);
  const before = await weir.logLength();
  assertError(t, await shop.api.post('/api/v1/coupons', couponBody('WELCOME')), 409, { code: 'promotion_code_in_use' });
  t.is(await weir.logLength(), before, 'a refused duplicate writes nothing');
  t.is((await rival.api.post('/api/v1/coupons', couponBody('welcome'))).status, 200);
  t.is((await shop.live.post('/api/v1/coupons', couponBody('welcome'))).status, 200);
  const found = await findPromotionCode(
    weir.readStore,
    { organizationId: shop.organizationId, environment: 'test' },
    'wElCoMe',
  );
  t.is(found?.code, 'Welcome');
});

test('coupons: a code reserved by a create that never finished is taken over only once that create is surely over (a minute), never from a create still under way', async (t) => {
  const weir = await startApp(t);
  const { api, organizationId } = await weir.merchant('Shop');
  // A create that reserved its code and then failed before its coupon was written.
  await weir.commands.handle(
    promotionCodeClaimAggregate,
    promotionCodeClaimId({ organizationId, environment: 'test' }, 'LEFT'),
    {
      type: 'ClaimPromotionCode',
      claim: {
        code: 'LEFT',
        couponId: randomUUID(),
        promotionCodeId: randomUUID(),
        organizationId,
        environment: 'test',
      },
    },
    { organizationId, environment: 'test', actor: 'test' },
  );
  assertError(t, await api.post('/api/v1/coupons', couponBody('left')), 409, { code: 'promotion_code_in_use' });
  weir.clock.advanceBy(CLAIM_ABANDONED_AFTER_MS);
  t.is((await api.post('/api/v1/coupons', couponBody('left'))).status, 200);
});

test('coupons: two creates racing for one code: exactly one wins', async (t) => {
  const weir = await startApp(t);
  const { api } = await weir.merchant('Shop');
  const results = await Promise.all(
    Array.from({ length: 5 }, (_, i) => api.post<Coupon>('/api/v1/coupons', couponBody(i % 2 ? 'race' : 'RACE'))),
  );
  t.is(results.filter((r) => r.status === 200).length, 1, JSON.stringify(results.map((r) => r.status)));
  t.true(results.filter((r) => r.status !== 200).every((r) => r.status === 409));
  t.is((await api.get<Page<Coupon>>('/api/v1/coupons')).body.count, 1);
});

test('coupons: invalid requests are 400s naming the field and write nothing', async (t) => {
  const weir = await startApp(t);
  const { api } = await weir.merchant('Shop');
  const before = await weir.logLength();
  const cases: [Record<string, unknown>, string][] = [
    [{ percentOff: 10, promotionCodeData: { data: [{ code: 'A1' }] } }, 'name'],
    [{ name: 'x', promotionCodeData: { data: [{ code: 'A1' }] } }, 'percentOff'],
    [
      { name: 'x', percentOff: 10, amountOff: '1', currency: 'usdc', promotionCodeData: { data: [{ code: 'A1' }] } },
      'percentOff',
    ],
    [{ name: 'x', percentOff: 101, promotionCodeData: { data: [{ code: 'A1' }] } }, 'percentOff'],
    [{ name: 'x', amountOff: '1.5', currency: 'usdc', promotionCodeData: { data: [{ code: 'A1' }] } }, 'amountOff'],
    [{ name: 'x', amountOff: '100', promotionCodeData: { data: [{ code: 'A1' }] } }, 'currency'],
    [{ name: 'x', percentOff: 10 }, 'promotionCodeData'],
    // A duration Weir does not know would be dropped unseen: refused, naming it.
    [{ name: 'x', percentOff: 10, duration: 'once', promotionCodeData: { data: [{ code: 'A1' }] } }, 'duration'],
    [{ name: 'x', percentOff: 10, promotionCodeData: { data: [] } }, 'promotionCodeData.data'],
    [
      { name: 'x', percentOff: 10, promotionCodeData: { data: [{ code: 'bad code!' }] } },
      'promotionCodeData.data[0].code',
    ],
    [{ name: 'x', percentOff: 10, redeemBy: 'tomorrow', promotionCodeData: { data: [{ code: 'A1' }] } }, 'redeemBy'],
    [
      { name: 'x', percentOff: 10, redeemBy: '2025-01-01T00:00:00Z', promotionCodeData: { data: [{ code: 'A1' }] } },
      'redeemBy',
    ],
    [
      {
        name: 'x',
        percentOff: 10,
        maxRedemptions: 1,
        promotionCodeData: { data: [{ code: 'A1', maxRedemptions: 2 }] },
      },
      'promotionCodeData.data[0].maxRedemptions',
    ],
  ];
  for (const [body, field] of cases) assertError(t, await api.post('/api/v1/coupons', body), 400, { field });
  t.is(await weir.logLength(), before);
  assertError(t, await api.get('/api/v1/coupons?status=bogus'), 400, { field: 'status' });
});

test('coupons: an amountOff finer than the smallest unit of its currency is a 400 naming amountOff and that unit, and writes nothing; a multiple of it is taken', async (t) => {
  const weir = await startApp(t);
  const { api } = await weir.merchant('Shop');
  const before = await weir.logLength();
  const body = (amountOff: string, currency: string, code: string) => ({
    name: 'Tiny',
    amountOff,
    currency,
    promotionCodeData: { data: [{ code }] },
  });
  // 10 is 10^-7 USDC: the test network's USDC has 6 decimals, so it would take nothing off.
  assertError(t, await api.post('/api/v1/coupons', body('10', 'usdc', 'TINY')), 400, {
    code: 'parameter_invalid',
    field: 'amountOff',
    message:
      /^amountOff: 10 \(10\^-8 USDC\) cannot be taken off exactly in USDC on Weir Testnet \(6 decimals\): the smallest unit of USDC is 0\.000001 \(100 scaled by 10\^8\), and a finer discount would be rounded down to it; use a multiple of 100$/,
  });
  assertError(t, await api.post('/api/v1/coupons', body('12345678', 'usdc', 'TINY')), 400, { field: 'amountOff' });
  t.is(await weir.logLength(), before);
  t.like((await api.post<Coupon>('/api/v1/coupons', body('12345600', 'usdc', 'TINY'))).body, { amountOff: '12345600' });
  // DAI has 18 decimals: 10^-8 of it can be taken off.
  t.like((await api.post<Coupon>('/api/v1/coupons', body('10', 'dai', 'DAITINY'))).body, { amountOff: '10' });
});

test('coupons: redemptions show on the coupon and its code; the last one moves it to limit_reached; past redeemBy reads as expired', async (t) => {
  const weir = await startApp(t);
  const { api, organizationId } = await weir.merchant('Shop');
  const created = await api.post<Coupon>('/api/v1/coupons', couponBody('TWICE'));
  const ctx = { organizationId, environment: 'test' as const, actor: 'checkout' };
  const code = await findPromotionCode(weir.readStore, ctx, 'twice');
  t.truthy(code);
  for (const session of ['s1', 's1', 's2']) {
    await weir.commands.handle(
      couponAggregate,
      code!.couponId,
      { type: 'RedeemPromotionCode', redemptionId: session, promotionCode: 'twice' },
      ctx,
    );
  }
  await t.throwsAsync(
    weir.commands.handle(
      couponAggregate,
      code!.couponId,
      { type: 'RedeemPromotionCode', redemptionId: 's3', promotionCode: 'twice' },
      ctx,
    ),
    { message: /maximum of 2/ },
  );
  await weir.commands.handle(couponAggregate, code!.couponId, { type: 'DisableCoupon' }, ctx);
  const { position } = await weir.commands.handle(couponAggregate, code!.couponId, { type: 'EnableCoupon' }, ctx);
  await weir.projections.waitFor(position!);
  const after = await api.get<Coupon>(`/api/v1/coupons/${created.body.id}`);
  t.like(after.body, { timesRedeemed: 2, status: 'limit_reached' });
  t.like(after.body.promotionCodes[0], { timesRedeemed: 2, isActive: false });

  const open = await api.post<Coupon>('/api/v1/coupons', couponBody('LATER'));
  weir.clock.set(Date.parse('2026-06-01T00:00:00Z'));
  t.is((await api.get<Coupon>(`/api/v1/coupons/${open.body.id}`)).body.status, 'expired');
});
