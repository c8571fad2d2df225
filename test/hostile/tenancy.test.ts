import test from 'ava';
import { apiClient } from '../support/api-client.ts';
import { writtenByRequest } from './checks.ts';
import { KINDS, startHostileWeir, type TenantRecords } from './fixtures.ts';

/**
 * The tenancy matrix: every kind of record of one organization and environment (organization A,
 * test), read, changed and deleted with another organization's keys and with A's own live key.
 * Each is a 401 or 404, never a 200; no answer shows any of A's records; nothing is written; and
 * A's records read the same afterwards. Lists are scoped instead: a 200 that holds nothing of A's.
 */

type Expect =
  /** Another tenant's record does not exist for the caller: 401 or 404. */
  | 'hidden'
  /** A list is the caller's own: 200, with none of A's records in it. */
  | 'scoped'
  /** A record of the caller's that names one of A's (a price, a customer, a code): refused, 400 or 404. */
  | 'refused';

type Row = {
  resource: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  body?: unknown;
  expect: Expect;
  /** The organization's, not one environment's (dashboard users and invites): A's live key may. */
  organizationWide?: true;
};

type Attacker = { name: string; records: TenantRecords; sameOrganization?: true };

/** The table: what an attacker tries against the victim's records of each kind. */
function rows(victim: TenantRecords, attacker: TenantRecords): Row[] {
  const id = (kind: keyof TenantRecords['ids']) => {
    const found = victim.ids[kind][0];
    if (!found) throw new Error(`the victim has no ${kind}`);
    return found;
  };
  const session = id('session');
  const invoice = id('invoice');
  const subscription = id('subscription');
  const customer = id('customer');
  const product = id('product');
  const price = victim.oneTimePrices[0]!;
  const coupon = id('coupon');
  const link = id('paymentLink');
  const endpoint = id('webhookEndpoint');
  const key = id('apiKey');
  const wallet = id('wallet');
  const paymentIntent = id('paymentIntent');
  const invite = id('invite');
  const hash = `0x${'ab'.repeat(32)}`;
  const ownSession = attacker.ids.session[0];
  const ownEndpoint = attacker.ids.webhookEndpoint[0];
  const table: (Row | false)[] = [
    { resource: 'checkout session', method: 'GET', path: `/api/v1/checkout/sessions/${session}`, expect: 'hidden' },
    {
      resource: 'checkout session',
      method: 'GET',
      path: `/api/v1/checkout/sessions/${session}/completed_webhook_delivered`,
      expect: 'hidden',
    },
    {
      resource: 'checkout session',
      method: 'POST',
      path: `/api/v1/checkout/sessions/${session}/cancel`,
      expect: 'hidden',
    },
    {
      resource: 'checkout session',
      method: 'POST',
      path: `/api/v1/checkout/sessions/${session}/complete-partial-checkout-session`,
      expect: 'hidden',
    },
    {
      resource: 'checkout session',
      method: 'POST',
      path: `/api/v1/checkout/sessions/${session}/auto-recover`,
      body: { chainId: 7357, transactionHash: hash },
      expect: 'hidden',
    },
    { resource: 'checkout session', method: 'GET', path: `/api/v1/checkout/sessions?ids=${session}`, expect: 'scoped' },
    {
      resource: 'checkout session',
      method: 'GET',
      path: `/api/v1/checkout/sessions?customerId=${customer}&subscriptionId=${subscription}`,
      expect: 'scoped',
    },
    {
      resource: 'checkout session',
      method: 'POST',
      path: '/api/v1/checkout/sessions',
      body: {
        mode: 'payment',
        successUrl: 'https://evil.example/ok',
        customerId: customer,
        lineItems: { data: [{ priceId: price, quantity: 1 }] },
      },
      expect: 'refused',
    },
    {
      resource: 'checkout session',
      method: 'POST',
      path: '/api/v1/checkout/sessions',
      body: {
        mode: 'payment',
        successUrl: 'https://evil.example/ok',
        lineItems: { data: [{ priceId: price, quantity: 1 }] },
      },
      expect: 'refused',
    },
    { resource: 'invoice', method: 'GET', path: `/api/v1/invoices/${invoice}`, expect: 'hidden' },
    {
      resource: 'invoice',
      method: 'PUT',
      path: `/api/v1/invoices/${invoice}`,
      body: { memo: 'mine now' },
      expect: 'hidden',
    },
    { resource: 'invoice', method: 'DELETE', path: `/api/v1/invoices/${invoice}`, expect: 'hidden' },
    ...(['finalize', 'pay', 'void', 'mark-uncollectible', 'duplicate'] as const).map(
      (action): Row => ({
        resource: 'invoice',
        method: 'POST',
        path: `/api/v1/invoices/${invoice}/${action}`,
        expect: 'hidden',
      }),
    ),
    {
      resource: 'invoice',
      method: 'POST',
      path: `/api/v1/invoices/${invoice}/send`,
      body: { to: 'evil@example.com' },
      expect: 'hidden',
    },
    {
      resource: 'invoice',
      method: 'GET',
      path: `/api/v1/invoices?ids=${invoice}&customerId=${customer}`,
      expect: 'scoped',
    },
    {
      resource: 'invoice',
      method: 'POST',
      path: '/api/v1/invoices',
      body: { customerId: customer, lineItems: { data: [{ priceId: price, quantity: 1 }] } },
      expect: 'refused',
    },
    { resource: 'subscription', method: 'GET', path: `/api/v1/subscriptions/${subscription}`, expect: 'hidden' },
    ...(['cancel', 'end', 'resume', 'pause'] as const).map(
      (action): Row => ({
        resource: 'subscription',
        method: 'POST',
        path: `/api/v1/subscriptions/${subscription}/${action}`,
        expect: 'hidden',
      }),
    ),
    { resource: 'subscription', method: 'GET', path: `/api/v1/subscriptions?ids=${subscription}`, expect: 'scoped' },
    { resource: 'customer', method: 'GET', path: `/api/v1/customers/${customer}`, expect: 'hidden' },
    {
      resource: 'customer',
      method: 'PUT',
      path: `/api/v1/customers/${customer}`,
      body: { name: 'mine' },
      expect: 'hidden',
    },
    { resource: 'customer', method: 'DELETE', path: `/api/v1/customers/${customer}`, expect: 'hidden' },
    { resource: 'customer', method: 'GET', path: `/api/v1/customers?ids=${customer}`, expect: 'scoped' },
    {
      resource: 'customer',
      method: 'GET',
      path: `/api/v1/customers?email=${encodeURIComponent(`${victim.marker.toLowerCase()}@example.com`)}`,
      expect: 'scoped',
    },
    { resource: 'product', method: 'GET', path: `/api/v1/products/${product}`, expect: 'hidden' },
    {
      resource: 'product',
      method: 'PUT',
      path: `/api/v1/products/${product}`,
      body: { name: 'mine' },
      expect: 'hidden',
    },
    { resource: 'product', method: 'POST', path: `/api/v1/products/${product}/deactivate`, expect: 'hidden' },
    { resource: 'product', method: 'POST', path: `/api/v1/products/${product}/activate`, expect: 'hidden' },
    { resource: 'product', method: 'DELETE', path: `/api/v1/products/${product}`, expect: 'hidden' },
    { resource: 'product', method: 'GET', path: `/api/v1/products?ids=${product}`, expect: 'scoped' },
    { resource: 'price', method: 'GET', path: `/api/v1/prices/${price}`, expect: 'hidden' },
    { resource: 'price', method: 'PUT', path: `/api/v1/prices/${price}`, body: { isActive: false }, expect: 'hidden' },
    { resource: 'price', method: 'GET', path: `/api/v1/prices?productId=${product}`, expect: 'scoped' },
    {
      resource: 'price',
      method: 'POST',
      path: '/api/v1/prices',
      body: { productId: product, currency: 'usdc', unitAmount: '100000000' },
      expect: 'hidden',
    },
    { resource: 'coupon', method: 'GET', path: `/api/v1/coupons/${coupon}`, expect: 'hidden' },
    { resource: 'coupon', method: 'PUT', path: `/api/v1/coupons/${coupon}`, body: { name: 'mine' }, expect: 'hidden' },
    ...(['disable', 'enable', 'archive'] as const).map(
      (action): Row => ({
        resource: 'coupon',
        method: 'POST',
        path: `/api/v1/coupons/${coupon}/${action}`,
        expect: 'hidden',
      }),
    ),
    { resource: 'coupon', method: 'GET', path: `/api/v1/coupons?ids=${coupon}`, expect: 'scoped' },
    { resource: 'coupon', method: 'GET', path: `/api/v1/coupons?searchText=${victim.marker}`, expect: 'scoped' },
    // A promotion code is A's alone: the attacker's own checkout cannot redeem it.
    ownSession !== undefined && {
      resource: 'promotion code',
      method: 'POST',
      path: `/checkout/${ownSession}/promotion-code`,
      body: { code: victim.codes[0] },
      expect: 'refused',
    },
    { resource: 'payment link', method: 'GET', path: `/api/v1/payment-links/${link}`, expect: 'hidden' },
    {
      resource: 'payment link',
      method: 'PUT',
      path: `/api/v1/payment-links/${link}`,
      body: { title: 'mine' },
      expect: 'hidden',
    },
    { resource: 'payment link', method: 'DELETE', path: `/api/v1/payment-links/${link}`, expect: 'hidden' },
    ...(['activate', 'deactivate'] as const).flatMap((action): Row[] =>
      (['PUT', 'POST'] as const).map((method) => ({
        resource: 'payment link',
        method,
        path: `/api/v1/payment-links/${link}/${action}`,
        expect: 'hidden',
      })),
    ),
    { resource: 'payment link', method: 'GET', path: `/api/v1/payment-links?ids=${link}`, expect: 'scoped' },
    {
      resource: 'payment link',
      method: 'POST',
      path: '/api/v1/payment-links',
      body: { title: 'theirs', priceId: price },
      expect: 'refused',
    },
    {
      resource: 'payment link',
      method: 'POST',
      path: '/api/v1/payment-links',
      body: { title: 'theirs', productId: product },
      expect: 'refused',
    },
    { resource: 'webhook endpoint', method: 'GET', path: `/api/v1/webhook-endpoints/${endpoint}`, expect: 'hidden' },
    {
      resource: 'webhook endpoint',
      method: 'PUT',
      path: `/api/v1/webhook-endpoints/${endpoint}`,
      body: { url: 'https://evil.example/steal' },
      expect: 'hidden',
    },
    { resource: 'webhook endpoint', method: 'DELETE', path: `/api/v1/webhook-endpoints/${endpoint}`, expect: 'hidden' },
    {
      resource: 'webhook endpoint',
      method: 'POST',
      path: `/api/v1/webhook-endpoints/${endpoint}/regenerate`,
      expect: 'hidden',
    },
    {
      resource: 'webhook endpoint',
      method: 'POST',
      path: `/api/v1/webhook-endpoints/${endpoint}/test`,
      expect: 'hidden',
    },
    {
      resource: 'webhook endpoint',
      method: 'GET',
      path: `/api/v1/webhook-endpoints?ids=${endpoint}`,
      expect: 'scoped',
    },
    {
      resource: 'webhook delivery',
      method: 'GET',
      path: `/api/v1/webhook-endpoints/${endpoint}/deliveries`,
      expect: 'hidden',
    },
    // The attacker's own endpoint's deliveries, asked for A's: none.
    ownEndpoint !== undefined && {
      resource: 'webhook delivery',
      method: 'GET',
      path: `/api/v1/webhook-endpoints/${ownEndpoint}/deliveries?eventId=${victim.deliveries[0]}`,
      expect: 'scoped',
    },
    {
      resource: 'invite',
      method: 'POST',
      path: `/api/v1/invites/${invite}/resend`,
      expect: 'hidden',
      organizationWide: true,
    },
    {
      resource: 'invite',
      method: 'DELETE',
      path: `/api/v1/invites/${invite}`,
      expect: 'hidden',
      organizationWide: true,
    },
    { resource: 'invite', method: 'GET', path: '/api/v1/invites', expect: 'scoped', organizationWide: true },
    { resource: 'API key', method: 'GET', path: `/api/v1/api-keys/${key}`, expect: 'hidden' },
    { resource: 'API key', method: 'POST', path: `/api/v1/api-keys/${key}/regenerate`, expect: 'hidden' },
    { resource: 'API key', method: 'DELETE', path: `/api/v1/api-keys/${key}?force=true`, expect: 'hidden' },
    { resource: 'API key', method: 'GET', path: `/api/v1/api-keys?ids=${key}`, expect: 'scoped' },
    {
      resource: 'wallet',
      method: 'GET',
      path: `/api/v1/organization/withdrawal-addresses/${wallet}`,
      expect: 'hidden',
    },
    {
      resource: 'wallet',
      method: 'PUT',
      path: `/api/v1/organization/withdrawal-addresses/${wallet}`,
      body: { name: 'mine', address: `0x${'ee'.repeat(20)}` },
      expect: 'hidden',
    },
    {
      resource: 'wallet',
      method: 'DELETE',
      path: `/api/v1/organization/withdrawal-addresses/${wallet}`,
      expect: 'hidden',
    },
    {
      resource: 'wallet',
      method: 'POST',
      path: `/api/v1/organization/withdrawal-addresses/${wallet}/mark-as-default`,
      expect: 'hidden',
    },
    { resource: 'payment intent', method: 'GET', path: `/api/v1/payment-intents/${paymentIntent}`, expect: 'hidden' },
    {
      resource: 'payment intent',
      method: 'GET',
      path: `/api/v1/payment-intents?ids=${paymentIntent}&checkoutSessionId=${session}`,
      expect: 'scoped',
    },
    {
      resource: 'payment intent',
      method: 'POST',
      path: `/api/v1/payment-intents/${paymentIntent}/mark-as-refund`,
      body: { markRefundedComment: 'not yours' },
      expect: 'hidden',
    },
    {
      resource: 'payment intent',
      method: 'POST',
      path: `/api/v1/payment-intents/${paymentIntent}/payment-receipts/send`,
      expect: 'hidden',
    },
    {
      resource: 'transaction',
      method: 'GET',
      path: `/api/v1/transactions?checkoutSessionId=${session}`,
      expect: 'scoped',
    },
    // Reads over the whole read model or log: the caller's tenant only, whatever the pipeline asks.
    {
      resource: 'report',
      method: 'GET',
      path: '/api/v1/reports/volume?interval=day&groupBy=paymentLink',
      expect: 'scoped',
    },
    {
      resource: 'analytics query',
      method: 'POST',
      path: '/api/v1/analytics/query',
      body: {
        collection: 'checkout_sessions',
        pipeline: [{ $match: { $or: [{ id: session }, { organizationId: { $exists: true } }] } }],
      },
      expect: 'scoped',
    },
    // A's live key sees its own organization's team events (the suite invites with it): org-wide records.
    {
      resource: 'event log',
      method: 'GET',
      path: '/api/v1/events?format=ndjson',
      expect: 'scoped',
      organizationWide: true,
    },
    {
      resource: 'checkout session export',
      method: 'GET',
      path: `/api/v1/checkout/sessions/export?ids=${session}`,
      expect: 'scoped',
    },
    // The organization routes act on the key's own organization and environment (no id names one;
    // naming A's in the query would only meet the 400 of an unknown parameter): the caller's alone.
    ...(['', '/payment-setting', '/withdrawal-addresses', '/invoice-setting'] as const).map(
      (sub): Row => ({
        resource: 'organization settings',
        method: 'GET',
        path: `/api/v1/organization${sub}`,
        expect: 'scoped',
      }),
    ),
  ];
  return table.filter((row): row is Row => row !== false);
}

/** What of the victim's must never be in another tenant's answer: its marker (in every name), its key, its record ids. */
function leaks(victim: TenantRecords, request: string, answer: string): string[] {
  const found: string[] = [];
  if (answer.includes(victim.marker)) found.push(`the marker ${victim.marker} of A's records`);
  if (
    answer.toLowerCase().includes(victim.marker.toLowerCase()) &&
    !request.toLowerCase().includes(victim.marker.toLowerCase())
  )
    found.push(`A's marker in another case`);
  if (answer.includes(victim.key)) found.push("A's secret key");
  // A's organization record of this environment (the organization routes answer its id).
  const record = `${victim.organizationId}_${victim.environment}`;
  if (answer.includes(record) && !request.includes(record)) found.push(`A's organization record ${record}`);
  // Chains and assets are everyone's; the rest is A's.
  const { chain: _chains, asset: _assets, ...records } = victim.ids;
  for (const id of Object.values(records).flat())
    if (id.length > 8 && answer.includes(id) && !request.includes(id)) found.push(`A's id ${id}, not asked for`);
  return [...new Set(found)];
}

test("the tenancy matrix: each kind of A's test records, read, changed and deleted with B's keys and A's live key: 401/404, nothing of A's shown, nothing written", async (t) => {
  const { weir, world } = await startHostileWeir(t);
  const victim = world.own;
  const owner = apiClient(weir.url, victim.key);
  // A's organization carries the marker too, so an answer about it would be recognised.
  t.is((await owner.put('/api/v1/organization', { name: `${victim.marker} Shop` })).status, 200);
  t.is((await owner.put('/api/v1/organization/invoice-setting', { footer: `${victim.marker} footer` })).status, 200);
  const attackers: Attacker[] = [
    { name: "organization B's test key", records: world.foreign },
    { name: "organization B's live key", records: world.foreignLive },
    { name: "A's own live key", records: world.otherEnv, sameOrganization: true },
  ];

  const snapshot = async () => {
    const paths = [
      `/api/v1/checkout/sessions/${victim.ids.session[0]}`,
      `/api/v1/invoices/${victim.ids.invoice[0]}`,
      `/api/v1/subscriptions/${victim.ids.subscription[0]}`,
      `/api/v1/customers/${victim.ids.customer[0]}`,
      `/api/v1/products/${victim.ids.product[0]}`,
      `/api/v1/prices/${victim.oneTimePrices[0]}`,
      `/api/v1/coupons/${victim.ids.coupon[0]}`,
      `/api/v1/payment-links/${victim.ids.paymentLink[0]}`,
      `/api/v1/webhook-endpoints/${victim.ids.webhookEndpoint[0]}`,
      `/api/v1/webhook-endpoints/${victim.ids.webhookEndpoint[0]}/deliveries`,
      `/api/v1/api-keys/${victim.ids.apiKey[0]}`,
      `/api/v1/organization/withdrawal-addresses/${victim.ids.wallet[0]}`,
      `/api/v1/payment-intents/${victim.ids.paymentIntent[0]}`,
      '/api/v1/organization',
      '/api/v1/organization/payment-setting',
      '/api/v1/organization/invoice-setting',
      '/api/v1/invites',
      `/api/v1/transactions?checkoutSessionId=${victim.ids.session[0]}`,
    ];
    return Object.fromEntries(await Promise.all(paths.map(async (p) => [p, (await owner.get(p)).body] as const)));
  };
  const before = await snapshot();

  const problems: string[] = [];
  let tried = 0;
  for (const attacker of attackers) {
    const api = apiClient(weir.url, attacker.records.key);
    for (const row of rows(victim, attacker.records)) {
      if (row.organizationWide && attacker.sameOrganization) continue;
      tried += 1;
      const what = `${attacker.name}: ${row.resource}: ${row.method} ${row.path}`;
      const head = await weir.eventStore.headPosition();
      const response = await api.call(row.method, row.path, row.body);
      const after = await weir.eventStore.headPosition();
      const written = after === head ? [] : writtenByRequest(await weir.eventStore.readAll(head, 1000));
      const text = JSON.stringify(response.body);
      const allowed = { hidden: [401, 404], scoped: [200], refused: [400, 404] }[row.expect];
      if (!allowed.includes(response.status))
        problems.push(`${what}: ${response.status} (expected ${allowed.join(' or ')}): ${text.slice(0, 200)}`);
      for (const leak of leaks(victim, `${row.path} ${JSON.stringify(row.body ?? null)}`, text))
        problems.push(`${what}: the answer shows ${leak}`);
      if (written.length)
        problems.push(`${what}: wrote ${written.map((e) => `${e.type} on ${e.streamId}`).join(', ')}`);
    }
  }
  t.log(
    `${tried} attempts by ${attackers.length} callers on ${new Set(rows(victim, world.foreign).map((r) => r.resource)).size} kinds of record`,
  );
  t.deepEqual(problems, [], 'what another tenant could see or do');
  t.deepEqual(await snapshot(), before, "A's records read the same after the attempts");
});

/** The matrix covers every kind of record the issue names. */
test('the tenancy matrix names every kind of record', (t) => {
  const stub = (label: string): TenantRecords => {
    const ids = Object.fromEntries(KINDS.map((k) => [k, [`${label}-${k}-0000000000`]])) as TenantRecords['ids'];
    return {
      label,
      key: 'k',
      organizationId: 'o',
      environment: 'test',
      ids,
      codes: ['C'],
      oneTimePrices: ['p'],
      recurringPrices: [],
      zeroPrices: [],
      deliveries: ['d'],
      marker: label,
    };
  };
  const kinds = new Set(rows(stub('victim'), stub('attacker')).map((r) => r.resource));
  t.deepEqual(
    [...kinds].sort(),
    [
      'API key',
      'analytics query',
      'checkout session',
      'checkout session export',
      'coupon',
      'customer',
      'event log',
      'invite',
      'invoice',
      'organization settings',
      'payment intent',
      'payment link',
      'price',
      'product',
      'promotion code',
      'report',
      'subscription',
      'transaction',
      'wallet',
      'webhook delivery',
      'webhook endpoint',
    ].sort(),
  );
});
