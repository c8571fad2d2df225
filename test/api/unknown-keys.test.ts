import test from 'ava';
import { createManualClock } from '../../src/shared/clock.ts';
import { KINDS, type TenantRecords } from '../hostile/fixtures.ts';
import { seededRandom } from '../hostile/random.ts';
import { TEMPLATES } from '../hostile/templates.ts';
import { apiClient } from '../support/api-client.ts';
import { type BodyDocument, type BodySchema, requestSchema, resolved } from '../support/request-schemas.ts';
import { ADMIN_TOKEN, createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';

/**
 * Every JSON body, and every object in it, refuses a key it does not know: a 400 naming the key's
 * path, never a 200 that drops it (a `successURL` for `successUrl`, Stripe's `inclusive`). The
 * bodies are the hostile suite's valid templates, so every route that takes one is covered.
 */

/**
 * Routes not sent here: the payment link page and the checkout page (without JavaScript) post forms,
 * not JSON; the faucet and the test payment answer before reading their body on a server with no
 * local chain or devnet (as this one).
 */
const NOT_SENT = new Set([
  'POST /pay/:id',
  'POST /checkout/:id',
  'POST /api/v1/faucet',
  'POST /checkout/:id/test-payment',
]);
/** Objects whose keys are the caller's own: metadata, and an analytics pipeline's stages. */
const FREE_KEYS = /(^|\.)metadata$|^pipeline\[/;
const UNKNOWN = 'zzNotAField';
const SEEDS = [1, 2, 3, 4, 5, 6];

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every object path in `value` (`''` the body, `lineItems.data[0]`…), outside free-key objects. */
function objectPaths(value: unknown, at = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((item, i) => objectPaths(item, `${at}[${i}]`));
  if (!isObject(value) || FREE_KEYS.test(at)) return [];
  return [at, ...Object.entries(value).flatMap(([k, v]) => objectPaths(v, at ? `${at}.${k}` : k))];
}

/** A copy of `body` with the unknown key added to the object at `path`. */
function withUnknown(body: unknown, path: string): unknown {
  // Through JSON: a template may share one object at two paths (an address and the shipping's).
  const copy = JSON.parse(JSON.stringify(body)) as unknown;
  let target = copy;
  for (const part of path.match(/[^.[\]]+/g) ?? []) target = (target as Json)[part];
  (target as Json)[UNKNOWN] = true;
  return copy;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

test('every JSON body route refuses an unknown key, at the top and in each nested object, naming it', async (t) => {
  const clock = createManualClock();
  const weir = await startTestWeir(t, {}, { clock });
  const merchant = await createMerchant(weir.url);
  const admin = apiClient(weir.url, ADMIN_TOKEN);
  const session = await merchant.api.post<{ id: string }>('/api/v1/checkout/sessions', sessionRequest());
  t.is(session.status, 200);
  const records: TenantRecords = {
    label: 'own',
    key: merchant.testSecretKey,
    organizationId: merchant.organizationId,
    environment: 'test',
    ids: Object.fromEntries(KINDS.map((k) => [k, []])) as unknown as TenantRecords['ids'],
    codes: [],
    oneTimePrices: [],
    recurringPrices: [],
    zeroPrices: [],
    deliveries: [],
    marker: 'unknown-keys',
  };
  const id = crypto.randomUUID();
  const dropped: string[] = [];
  const checked = new Set<string>();
  for (const [route, template] of Object.entries(TEMPLATES)) {
    if (NOT_SENT.has(route)) continue;
    const [method, path] = route.split(' ') as [string, string];
    const concrete = path.replace(':id', path.startsWith('/checkout/') ? session.body.id : id).replace(/:\w+/g, id);
    const client = path.startsWith('/admin/') ? admin : /\/(users|invites)\b/.test(path) ? merchant.live : merchant.api;
    for (const seed of SEEDS) {
      const body = template(records, seededRandom(seed), clock);
      // A route that takes no body (an action, a delete) has none to check.
      if (body === undefined) continue;
      for (const at of objectPaths(body)) {
        const where = `${route} ${at.replace(/\[\d+\]/g, '[]')}`;
        if (checked.has(where)) continue;
        checked.add(where);
        const answer = await client.call(method, concrete, withUnknown(body, at));
        const message = (answer.body as { message?: string } | null)?.message ?? '';
        const named = `${at ? `${at}.` : ''}${UNKNOWN}`;
        if (answer.status !== 400 || !new RegExp(`^${escapeRegExp(named)}: is not `).test(message))
          dropped.push(`${where || route}: ${answer.status} ${message.slice(0, 160)}`);
      }
    }
  }
  t.true(checked.size > 60, `only ${checked.size} objects checked`);
  t.deepEqual(dropped, [], `${dropped.length} objects took an unknown key:\n${dropped.join('\n')}`);
});

/** Objects whose keys are the caller's own, in a served document's request bodies. */
const OPEN_OBJECTS = new Set([
  // A MongoDB-like stage (`{$match: …}`): its keys are operators and field names, checked by the query.
  'POST /api/v1/analytics/query pipeline[]',
]);

test('the document shows every object of every JSON request body closed (additionalProperties: false) or a map', async (t) => {
  const weir = await startTestWeir(t);
  const document = (await (await fetch(`${weir.url}/api/v1/openapi.json`)).json()) as BodyDocument;
  const open: string[] = [];
  const walk = (schema: BodySchema | undefined, at: string, seen: ReadonlySet<BodySchema>) => {
    const s = resolved(document, schema);
    if (!s || seen.has(s)) return;
    const within = new Set([...seen, s]);
    for (const part of [...(s.allOf ?? []), ...(s.oneOf ?? []), ...(s.anyOf ?? [])]) walk(part, at, within);
    if (s.items) walk(s.items, `${at}[]`, within);
    const isObject =
      s.properties !== undefined || s.type === 'object' || (Array.isArray(s.type) && s.type.includes('object'));
    const isMap = typeof s.additionalProperties === 'object' && Object.keys(s.additionalProperties).length > 0;
    if (isObject && s.additionalProperties !== false && !isMap) open.push(at || '(body)');
    for (const [name, field] of Object.entries(s.properties ?? {})) walk(field, at ? `${at}.${name}` : name, within);
  };
  for (const [path, item] of Object.entries(document.paths))
    for (const method of Object.keys(item)) {
      const before = open.length;
      walk(requestSchema(document, path, method), '', new Set());
      const found = open.splice(before).map((at) => `${method.toUpperCase()} ${path} ${at}`);
      open.push(...found.filter((where) => !OPEN_OBJECTS.has(where)));
    }
  t.deepEqual(open, [], 'these request objects take any key: close them (bodyObject, objectField, closedObject)');
});

test("the reference's fields Weir ignores are taken on every route that declares them, and change nothing", async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const ok = <T>(what: string, answer: { status: number; body: T }) => {
    t.is(answer.status, 200, `${what}: ${JSON.stringify(answer.body)}`);
    return answer.body;
  };
  const line = {
    priceData: { currency: 'usdc', unitAmount: '1000000', productData: { name: 'Tea', visibility: 'API' } },
  };
  const session = ok(
    'session',
    await api.post<{ metadata: Record<string, string> }>('/api/v1/checkout/sessions', {
      ...sessionRequest(),
      nameCollection: true,
      emailCollection: true,
      customFields: { fields: [] },
      defaultPromotionCode: null,
      paymentSetting: { allowedChains: [{ chainId: 7357, blacklistCurrencies: [], withdrawalAddress: null }] },
      lineItems: { data: [{ ...line, quantity: 1, periodStart: '2030-01-01', periodEnd: '2030-02-01' }] },
    }),
  );
  t.false('nameCollection' in session);
  const customer = ok('customer', await api.post<{ id: string }>('/api/v1/customers', { email: 'ada@example.com' }));
  const invoiceFields = { customFields: {}, clientReferenceId: 'r-1', visibility: 'API', allowPromotionCodes: true };
  const invoice = ok(
    'invoice',
    await api.post<{ id: string }>('/api/v1/invoices', {
      customerId: customer.id,
      lineItems: { data: [{ ...line, quantity: 1 }] },
      ...invoiceFields,
      fromInvoiceId: crypto.randomUUID(),
      paymentSetting: { allowedChains: [{ chainId: 7357 }] },
    }),
  );
  ok('invoice update', await api.put(`/api/v1/invoices/${invoice.id}`, { memo: 'Thanks', ...invoiceFields }));
  ok('invoice send', await api.post(`/api/v1/invoices/${invoice.id}/send`, { finalizeScheduleAt: null }));
  const product = ok('product', await api.post<{ id: string }>('/api/v1/products', { name: 'Coffee' }));
  const price = ok(
    'price',
    await api.post<{ id: string }>('/api/v1/prices', {
      productId: product.id,
      currency: 'usdc',
      unitAmount: '1000000',
      customPreset: 1,
      customUnitAmountSuggestions: [],
      visibility: 'API',
    }),
  );
  ok('price update', await api.put(`/api/v1/prices/${price.id}`, { nickname: 'house', visibility: 'API' }));
  const link = ok(
    'payment link',
    await api.post<{ id: string; currency: string }>('/api/v1/payment-links', {
      title: 'Tea',
      amount: '100000000',
      currencies: ['usdc'],
      suggestedCurrency: 'dai',
    }),
  );
  t.is(link.currency, 'usdc');
  t.false('suggestedCurrency' in link);
  ok(
    'payment link update',
    await api.put(`/api/v1/payment-links/${link.id}`, {
      title: 'Green tea',
      currencies: ['usdc'],
      preferredCurrency: 'usdc',
      suggestedCurrency: 'usdc',
    }),
  );
});

test("the reference's fields Weir cannot honour (a session's own withdrawal address, excluded currencies, a default promotion code, a scheduled send) are refused when set, naming them, and nothing is written", async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const refused = async (path: string, body: unknown, field: string) => {
    const answer = await api.post<{ message: string }>(path, body);
    t.is(answer.status, 400, JSON.stringify(answer.body));
    t.regex(answer.body.message, new RegExp(`^${escapeRegExp(field)}: is not supported by Weir: `));
  };
  const chain = (extra: Json) => ({
    ...sessionRequest(),
    paymentSetting: { allowedChains: [{ chainId: 7357, ...extra }] },
  });
  await refused(
    '/api/v1/checkout/sessions',
    chain({ withdrawalAddress: '0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65' }),
    'paymentSetting.allowedChains[0].withdrawalAddress',
  );
  await refused(
    '/api/v1/checkout/sessions',
    chain({ withdrawalAddresses: ['0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65'] }),
    'paymentSetting.allowedChains[0].withdrawalAddresses',
  );
  await refused(
    '/api/v1/checkout/sessions',
    chain({ blacklistCurrencies: ['dai'] }),
    'paymentSetting.allowedChains[0].blacklistCurrencies',
  );
  await refused(
    '/api/v1/checkout/sessions',
    { ...sessionRequest(), defaultPromotionCode: 'SUMMER' },
    'defaultPromotionCode',
  );
  const sessions = await api.get<{ data: unknown[] }>('/api/v1/checkout/sessions');
  t.is(sessions.body.data.length, 0, 'a refused session is not created');
  const customer = await api.post<{ id: string }>('/api/v1/customers', { email: 'ada@example.com' });
  const invoice = await api.post<{ id: string; status: string }>('/api/v1/invoices', {
    customerId: customer.body.id,
    lineItems: {
      data: [{ priceData: { currency: 'usdc', unitAmount: '1000000', productData: { name: 'Tea' } }, quantity: 1 }],
    },
  });
  await refused(
    `/api/v1/invoices/${invoice.body.id}/send`,
    { finalizeScheduleAt: '2030-01-01T00:00:00Z' },
    'finalizeScheduleAt',
  );
  t.is((await api.get<{ status: string }>(`/api/v1/invoices/${invoice.body.id}`)).body.status, 'draft');
});
