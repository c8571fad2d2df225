import test, { type ExecutionContext } from 'ava';
import type { Rail } from '../../src/chain-ingest/rail.ts';
import { createTestRail, TEST_NETWORK } from '../../src/chain-ingest/test-rail.ts';
import { toTronRailNetwork } from '../../src/chain-ingest/tron/define-network.ts';
import { TRON_LOCAL_CHAIN_ID, tronLocalNetwork } from '../../src/chain-ingest/tron/networks.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { assertError, getSession, type Page, payInFull, payLate, payPart, reveal, type Session } from './helpers.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import { readmeSection } from '../support/readme.ts';
import { chainPublisher, randomHash } from '../support/chain-publisher.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';

type Paid = Session & { paymentIntent: { id: string }; payments: { network: string }[] };

type Report = { object: 'report'; columns: string[]; data: Record<string, string | number | null>[] };

const MINUTE = 60_000;

/**
 * A known history on a manual clock: Monday 2 March 2026, sessions of 3.00 and 2.50 USDC paid 5 and
 * 15 minutes after they were made; a week later one of 10.00 paid after 1 minute; one never paid;
 * the first marked refunded. Another merchant's paid session must count nowhere.
 */
/** A 10 USDC monthly plan, subscribed to through a checkout session paid in full: its product and subscription. */
async function subscribedToMonthlyPlan(
  t: ExecutionContext,
  weir: Awaited<ReturnType<typeof startTestWeir>>,
  api: ReturnType<typeof apiClient>,
): Promise<{ productId: string; subscriptionId: string }> {
  const plan = await api.post<{ id: string; defaultPrice: { id: string } }>('/api/v1/products', {
    name: 'Pro',
    defaultPriceData: {
      currency: 'usdc',
      unitAmount: '1000000000',
      type: 'recurring',
      interval: 'month',
      intervalCount: 1,
    },
  });
  t.is(plan.status, 200, JSON.stringify(plan.body));
  const session = await api.post<Session & { subscriptionId: string }>('/api/v1/checkout/sessions', {
    mode: 'subscription',
    successUrl: 'https://shop.example/welcome',
    lineItems: { data: [{ priceId: plan.body.defaultPrice.id, quantity: 1 }] },
    customerData: { email: 'subscriber@example.com' },
  });
  t.is(session.status, 200, JSON.stringify(session.body));
  await payInFull(weir, api, session.body);
  return { productId: plan.body.id, subscriptionId: session.body.subscriptionId };
}

async function history(t: Parameters<typeof startTestWeir>[0]) {
  const clock = createManualClock(Date.parse('2026-03-02T10:00:00Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const shop = await createMerchant(weir.url, 'Shop');
  const other = await createMerchant(weir.url, 'Other');
  const create = async (api: typeof shop.api, unitAmount: string, quantity: number) => {
    const made = await api.post<Session>('/api/v1/checkout/sessions', sessionRequest(unitAmount, quantity));
    t.is(made.status, 200, JSON.stringify(made.body));
    return made.body;
  };
  const a = await create(shop.api, '150000000', 2);
  const b = await create(shop.api, '250000000', 1);
  clock.advanceBy(5 * MINUTE);
  const paidA = (await payInFull(weir, shop.api, a)) as Paid;
  clock.advanceBy(10 * MINUTE);
  await payInFull(weir, shop.api, b);
  await payInFull(weir, other.api, await create(other.api, '999900000000', 1));
  clock.set(Date.parse('2026-03-10T09:00:00Z'));
  const c = await create(shop.api, '1000000000', 1);
  await create(shop.api, '100000000', 1);
  clock.advanceBy(MINUTE);
  await payInFull(weir, shop.api, c);
  const refunded = await shop.api.post(`/api/v1/payment-intents/${paidA.paymentIntent.id}/mark-as-refund`, {});
  t.is(refunded.status, 200, JSON.stringify(refunded.body));
  return { weir, shop, other, network: paidA.payments[0]!.network };
}

// The local Tron, offered by a rail of the test's own and fed through the bus as its follower would.
const TRON_LOCAL = toTronRailNetwork(
  tronLocalNetwork({ usdt: 'TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL', usdc: 'TBDCyrZ1hT1PDDFf2yRABwPrFica5qqPUX' }),
);
const tronRail: Rail = {
  name: 'tron (test)',
  networks: (environment) => (environment === 'test' ? [TRON_LOCAL] : []),
  unpayableAddress: () => null,
  depositAddress: () => 'TWd4WrZ9wn84f5x1hZhL4DHvk738ns5jwb',
  paymentRequest: ({ address, amountDue }) => ({
    uri: `tron:${address.paymentAddress}?amount=${amountDue}`,
    payee: address.paymentAddress,
  }),
};

/** A shop paid on the test network and on the local Tron, with a session of 3.00 USDC whose addresses on both the payer was shown. */
async function shopOnTwoNetworks(t: Parameters<typeof startTestWeir>[0]) {
  const clock = createManualClock(Date.parse('2026-03-02T10:00:00Z'));
  const weir = await startTestWeir(t, { testRail: false }, { clock, extraRails: [createTestRail(), tronRail] });
  const { api } = await createMerchant(weir.url, 'Shop');
  const wallet = { chainId: TRON_LOCAL_CHAIN_ID, address: 'TWd4WrZ9wn84f5x1hZhL4DHvk738ns5jwb', name: 'tron' };
  t.is((await api.post('/api/v1/organization/withdrawal-addresses', wallet)).status, 200);
  const session = (await api.post<Session>('/api/v1/checkout/sessions', sessionRequest('300000000', 1))).body;
  const choose = async (chainId: number) => {
    const address = session.addresses.find((a) => a.asset.chainId === chainId && a.asset.currency === 'usdc')!;
    const chosen = await apiClient(weir.url).post<{ address: string; amountDueRaw: string }>(
      `/checkout/${session.id}/payment-method`,
      { assetId: address.asset.id },
    );
    t.is(chosen.status, 200, JSON.stringify(chosen.body));
    return chosen.body;
  };
  // The payer looks at the test network's address, then at Tron's.
  const evm = await choose(TEST_NETWORK.chainId);
  const tron = await choose(TRON_LOCAL.chainId);
  return { weir, api, session, evm, tron, tronChain: chainPublisher(weir.bus, TRON_LOCAL) };
}

test('refunds by network: a session paid on Tron counts its refund under Tron, not under the network of a transfer still pending when it was marked', async (t) => {
  const { weir, api, session, evm, tron, tronChain } = await shopOnTwoNetworks(t);
  // Paid in full on Tron.
  const tronBlock = randomHash();
  await tronChain.transfer({ to: tron.address, amount: tron.amountDueRaw, blockNumber: 5, blockHash: tronBlock });
  await tronChain.final(5, tronBlock);
  await eventually(async () => ((await getSession(api, session.id)).status === 'complete' ? true : undefined), 'paid');
  // Then a transfer to the test network's address, never final: the session's last payment, pending.
  await chainPublisher(weir.bus).transfer({
    to: evm.address,
    amount: '1000000',
    blockNumber: 900,
    blockHash: randomHash(),
  });
  await eventually(async () => {
    const payments = (await api.get<{ payments: { status: string }[] }>(`/api/v1/checkout/sessions/${session.id}`)).body
      .payments;
    return payments.length === 2 && payments[1]!.status === 'pending' ? true : undefined;
  }, 'the pending transfer');
  const paymentIntentId = (await api.get<Paid>(`/api/v1/checkout/sessions/${session.id}`)).body.paymentIntent.id;
  t.is((await api.post(`/api/v1/payment-intents/${paymentIntentId}/mark-as-refund`, {})).status, 200);

  const refunds = await api.get<Report>('/api/v1/reports/refunds?groupBy=network');
  t.is(refunds.status, 200, JSON.stringify(refunds.body));
  t.deepEqual(
    refunds.body.data.map((row) => [row.group, row.currency, row.refundsMarked, row.amountRefunded]),
    [[TRON_LOCAL.network, 'usdc', 1, '300000000']],
  );
});

test('payment-issues by network: a late payment on the test network counts there, not under Tron, which brought most of the short session', async (t) => {
  const { weir, api, session, evm, tron, tronChain } = await shopOnTwoNetworks(t);
  // 2.00 of 3.00 on Tron, and the session completed as is for it.
  const tronBlock = randomHash();
  const part = ((BigInt(tron.amountDueRaw) * 2n) / 3n).toString();
  await tronChain.transfer({ to: tron.address, amount: part, blockNumber: 5, blockHash: tronBlock });
  await tronChain.final(5, tronBlock);
  await eventually(
    async () => ((await getSession(api, session.id)).status === 'incomplete' ? true : undefined),
    'part',
  );
  const asIs = await api.post(`/api/v1/checkout/sessions/${session.id}/complete-partial-checkout-session`, {});
  t.is(asIs.status, 200, JSON.stringify(asIs.body));
  // Then 0.50 to the test network's address: late, the session has ended.
  const chain = chainPublisher(weir.bus);
  const block = randomHash();
  await chain.transfer({
    to: evm.address,
    amount: (BigInt(evm.amountDueRaw) / 6n).toString(),
    blockNumber: 910,
    blockHash: block,
  });
  await chain.final(910, block);
  await eventually(async () => {
    const s = await getSession(api, session.id);
    return s.paymentIntent.transactions.some((tx) => tx.late) ? true : undefined;
  }, 'the late payment');

  const issues = await api.get<Report>('/api/v1/reports/payment-issues?groupBy=network');
  t.is(issues.status, 200, JSON.stringify(issues.body));
  t.deepEqual(
    issues.body.data.map((row) => [row.group, row.underpaidSessions, row.latePayments, row.overpaidSessions]),
    [
      [TRON_LOCAL.network, 1, 0, 0],
      [TEST_NETWORK.network, 0, 1, 0],
    ],
  );
  // Split by network, the figures add up to the report's whole.
  const [whole] = (await api.get<Report>('/api/v1/reports/payment-issues')).body.data;
  t.like(whole, { underpaidSessions: 1, latePayments: 1, overpaidSessions: 0 });
});

test('reports over a known history: volume by month, week and network, conversion, time to pay, refunds; CSV and NDJSON; another tenant counts nowhere; bad parameters named', async (t) => {
  const { shop, other, network } = await history(t);
  const report = async (query: string) => {
    const answer = await shop.api.get<Report>(`/api/v1/reports/${query}`);
    t.is(answer.status, 200, JSON.stringify(answer.body));
    return answer.body;
  };

  const month = await report('volume');
  t.deepEqual(month.columns, [
    'period',
    'localDate',
    'group',
    'currency',
    'payments',
    'grossVolume',
    'lateVolume',
    'fees',
    'gasFees',
    'netVolume',
    'operatorSweepGas',
  ]);
  t.deepEqual(month.data, [
    {
      period: '2026-03-01T00:00:00.000Z',
      localDate: '2026-03-01',
      group: null,
      currency: 'usdc',
      payments: 3,
      grossVolume: '1550000000',
      lateVolume: '0',
      fees: '0',
      gasFees: '0',
      netVolume: '1550000000',
      operatorSweepGas: null,
    },
  ]);
  const weeks = await report('volume?interval=week&groupBy=network');
  t.deepEqual(
    weeks.data.map((r) => [r.period, r.group, r.payments, r.grossVolume]),
    [
      ['2026-03-02T00:00:00.000Z', network, 2, '550000000'],
      ['2026-03-09T00:00:00.000Z', network, 1, '1000000000'],
    ],
  );
  // The sweeper's gas, in the network's coin, is given per network alone.
  for (const row of weeks.data) t.regex(String(row.operatorSweepGas), /^\d+$/);
  t.deepEqual(
    (await report('volume?interval=day&from=2026-03-03')).data.map((r) => [r.period, r.grossVolume]),
    [['2026-03-10T00:00:00.000Z', '1000000000']],
  );

  t.deepEqual((await report('conversion')).data, [
    {
      period: '2026-03-01T00:00:00.000Z',
      localDate: '2026-03-01',
      group: null,
      created: 4,
      completed: 3,
      conversionRate: '0.7500',
    },
  ]);
  const [pay] = (await report('time-to-pay')).data;
  t.like(pay, { payments: 3, medianSeconds: 300, p95Seconds: 900 });
  t.deepEqual((await report('refunds')).data, [
    {
      period: '2026-03-01T00:00:00.000Z',
      localDate: '2026-03-01',
      group: null,
      currency: 'usdc',
      refundsMarked: 1,
      amountRefunded: '300000000',
    },
  ]);
  t.like((await report('payment-issues')).data[0], { underpaidSessions: 0, latePayments: 0, overpaidSessions: 0 });

  const csv = await shop.api.call('GET', '/api/v1/reports/volume?interval=week&format=csv');
  t.regex(csv.headers.get('content-type') ?? '', /^text\/csv/);
  t.is(
    String(csv.body),
    'period,localDate,group,currency,payments,grossVolume,lateVolume,fees,gasFees,netVolume,operatorSweepGas\r\n' +
      '2026-03-02T00:00:00.000Z,2026-03-02,,usdc,2,550000000,0,0,0,550000000,\r\n' +
      '2026-03-09T00:00:00.000Z,2026-03-09,,usdc,1,1000000000,0,0,0,1000000000,\r\n',
  );
  // In a zone ahead of UTC a day starts the day before in UTC: the local date beside it says which day it is.
  const tokyo = await shop.api.call('GET', '/api/v1/reports/volume?interval=day&timezone=Asia/Tokyo&format=csv');
  t.is(
    String(tokyo.body),
    'period,localDate,group,currency,payments,grossVolume,lateVolume,fees,gasFees,netVolume,operatorSweepGas\r\n' +
      '2026-03-01T15:00:00.000Z,2026-03-02,,usdc,2,550000000,0,0,0,550000000,\r\n' +
      '2026-03-09T15:00:00.000Z,2026-03-10,,usdc,1,1000000000,0,0,0,1000000000,\r\n',
  );
  t.like((await report('conversion?interval=month&timezone=America/New_York')).data[0], {
    period: '2026-03-01T05:00:00.000Z',
    localDate: '2026-03-01',
  });
  const ndjson = await shop.api.call('GET', '/api/v1/reports/conversion?format=ndjson');
  t.regex(ndjson.headers.get('content-type') ?? '', /^application\/x-ndjson/);
  t.deepEqual(
    // One line is a JSON document too, which the test client parses.
    (typeof ndjson.body === 'string' ? ndjson.body : JSON.stringify(ndjson.body))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as unknown),
    (await report('conversion')).data,
  );

  // The other merchant sees its own one payment only.
  const theirs = (await other.api.get<Report>('/api/v1/reports/volume')).body.data;
  t.deepEqual(
    theirs.map((r) => r.grossVolume),
    ['999900000000'],
  );

  assertError(t, await shop.api.get('/api/v1/reports/conversion?groupBy=product'), 400, { field: 'groupBy' });
  // A grouping no report takes is named with this report's, not every report's.
  assertError(t, await shop.api.get('/api/v1/reports/conversion?groupBy=day'), 400, {
    field: 'groupBy',
    message: /^groupBy: the conversion report groups by none, currency, paymentLink$/,
  });
  assertError(t, await shop.api.get('/api/v1/reports/refunds?groupBy=currency&groupBy=status'), 400, {
    message: /^groupBy: the refunds report groups by none, currency, network, paymentLink$/,
  });
  assertError(t, await shop.api.get('/api/v1/reports/volume?interval=year'), 400, { field: 'interval' });
  assertError(t, await shop.api.get('/api/v1/reports/volume?from=yesterday'), 400, { field: 'from' });
  assertError(t, await shop.api.get('/api/v1/reports/volume?from=2026-03-05&to=2026-03-01'), 400, { field: 'to' });
  // A report name is a path: one that does not exist is a 404, whatever its query.
  assertError(t, await shop.api.get('/api/v1/reports/churn'), 404, { code: 'resource_missing' });
  assertError(t, await shop.api.get('/api/v1/reports/nope?interval=day'), 404, { code: 'resource_missing' });
});

test('a date-only to takes in that whole day, in every report; a timestamp to stays exact; each report names the time it counts by', async (t) => {
  const { shop, weir } = await history(t);
  const report = async (query: string) => {
    const answer = await shop.api.get<Report & { dateField: string }>(`/api/v1/reports/${query}`);
    t.is(answer.status, 200, JSON.stringify(answer.body));
    return answer.body;
  };
  const days = async (query: string) => (await report(query)).data.map((r) => [r.period, r.payments ?? r.created]);
  // The 10.00 payment was confirmed at 09:01 on 10 March: `to=2026-03-10` means through the 10th.
  t.deepEqual(await days('volume?interval=day&to=2026-03-10'), [
    ['2026-03-02T00:00:00.000Z', 2],
    ['2026-03-10T00:00:00.000Z', 1],
  ]);
  t.deepEqual(await days('volume?interval=day&from=2026-03-10&to=2026-03-10'), [['2026-03-10T00:00:00.000Z', 1]]);
  t.deepEqual(await days('volume?interval=day&to=2026-03-10T09:00:00Z'), [['2026-03-02T00:00:00.000Z', 2]]);
  t.deepEqual(await days('volume?interval=day&to=2026-03-10T09:01:00Z'), [
    ['2026-03-02T00:00:00.000Z', 2],
    ['2026-03-10T00:00:00.000Z', 1],
  ]);
  // By creation too: the two sessions made on 2 March are in a range to that date.
  t.deepEqual(await days('conversion?interval=day&to=2026-03-02'), [['2026-03-02T00:00:00.000Z', 2]]);
  t.is((await report('refunds?to=2026-03-10')).data.length, 1);
  t.is((await report('payment-issues?interval=day&to=2026-03-10')).data.length, 2);
  t.is((await report('time-to-pay?interval=day&from=2026-03-10&to=2026-03-10')).data[0]?.payments, 1);

  t.is((await report('volume')).dateField, 'payments.confirmedAt');
  // By product it counts what complete sessions sold, by their completion.
  t.is((await report('volume?groupBy=product')).dateField, 'completedAt');
  t.is((await report('volume?groupBy=network')).dateField, 'payments.confirmedAt');
  t.is((await report('conversion')).dateField, 'createdAt');
  t.is((await report('refunds')).dateField, 'paymentIntent.markRefundedAt');
  const openapi = (await (await fetch(`${weir.url}/api/v1/openapi.json`)).json()) as {
    paths: Record<string, { get?: { description?: string; parameters?: { name: string; description?: string }[] } }>;
  };
  t.regex(
    openapi.paths['/api/v1/reports/{name}']?.get?.description ?? '',
    /`volume`: [^;]*\(by payments\.confirmedAt, by product by completedAt;/,
  );
  const to = openapi.paths['/api/v1/reports/{name}']?.get?.parameters?.find((p) => p.name === 'to');
  t.regex(to?.description ?? '', /a date alone counts that whole day/);
  // Not paginated, but bounded: the description names the limit and the 400 past it.
  t.regex(
    openapi.paths['/api/v1/reports/{name}']?.get?.description ?? '',
    /at most 10000 rows .*`report_too_large` naming the limit/,
  );
});

test('where daylight saving skips midnight (Santiago, 6 September 2026), that day starts at the change: a session an hour before it is the day before', async (t) => {
  // 03:30Z is 23:30 on the 5th in Santiago (-04); at 04:00Z its clocks go from 00:00 to 01:00 (-03).
  const clock = createManualClock(Date.parse('2026-09-06T03:30:00Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const shop = await createMerchant(weir.url, 'Shop');
  t.is((await shop.api.post('/api/v1/checkout/sessions', sessionRequest('100000000', 1))).status, 200);
  clock.set(Date.parse('2026-09-06T04:30:00Z'));
  t.is((await shop.api.post('/api/v1/checkout/sessions', sessionRequest('100000000', 1))).status, 200);
  const days = async (query: string) => {
    const answer = await shop.api.get<Report>(
      `/api/v1/reports/conversion?interval=day&timezone=America/Santiago${query}`,
    );
    t.is(answer.status, 200, JSON.stringify(answer.body));
    return answer.body.data.map((r) => [r.period, r.localDate, r.created]);
  };
  t.deepEqual(await days('&from=2026-09-06&to=2026-09-06'), [['2026-09-06T04:00:00.000Z', '2026-09-06', 1]]);
  t.deepEqual(await days(''), [
    ['2026-09-05T04:00:00.000Z', '2026-09-05', 1],
    ['2026-09-06T04:00:00.000Z', '2026-09-06', 1],
  ]);
  // Years 0 to 99 are themselves: read as 1999-12-31, this range's from came after its to.
  t.deepEqual(await days('&from=0099-12-31&to=0100-01-01'), []);
});

test('volume counts what payers sent: a session completed partly paid adds its 1.00 of 2.234566, not what was asked, and shows that as its net', async (t) => {
  const clock = createManualClock(Date.parse('2026-03-02T10:00:00Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const { api } = await createMerchant(weir.url, 'Shop');
  const made = await api.post<Session>('/api/v1/checkout/sessions', sessionRequest('223456600', 1));
  t.is(made.status, 200, JSON.stringify(made.body));
  const shown = await reveal(weir, api, made.body.id);
  // 1.00 USDC (6 decimals on chain) reaches the deposit address.
  const chain = chainPublisher(weir.bus);
  const blockHash = randomHash();
  await chain.transfer({ to: shown.address, amount: '1000000', blockNumber: 700_000, blockHash });
  await chain.final(700_000, blockHash);
  await eventually(
    async () => ((await getSession(api, made.body.id)).status === 'incomplete' ? true : undefined),
    'the part payment',
  );
  const completed = await api.post(`/api/v1/checkout/sessions/${made.body.id}/complete-partial-checkout-session`, {});
  t.is(completed.status, 200, JSON.stringify(completed.body));
  t.like(completed.body, { amountTotal: '223456600', amountReceived: '100000000', amountNet: '100000000' });
  const volume = await api.get<Report>('/api/v1/reports/volume?groupBy=currency');
  t.is(volume.status, 200, JSON.stringify(volume.body));
  t.like(volume.body.data[0], { group: 'usdc', payments: 1, grossVolume: '100000000', netVolume: '100000000' });
});

test('amounts of different currencies are never added: volume by network or none gives a row per currency, and the schema names it', async (t) => {
  const clock = createManualClock(Date.parse('2026-03-02T10:00:00Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const { api } = await createMerchant(weir.url, 'Shop');
  const chain = chainPublisher(weir.bus);
  const pay = async (currency: 'usdc' | 'dai', unitAmount: string, blockNumber: number) => {
    const request = sessionRequest(unitAmount, 1);
    request.lineItems.data[0]!.priceData.currency = currency;
    const made = await api.post<Session>('/api/v1/checkout/sessions', request);
    t.is(made.status, 200, JSON.stringify(made.body));
    const address = made.body.addresses.find((a) => a.asset.currency === currency)!;
    const shown = await apiClient(weir.url).post<{ address: string; amountDueRaw: string }>(
      `/checkout/${made.body.id}/payment-method`,
      { assetId: address.asset.id },
    );
    t.is(shown.status, 200, JSON.stringify(shown.body));
    const blockHash = randomHash();
    await chain.transfer({
      to: shown.body.address,
      amount: shown.body.amountDueRaw,
      asset: currency,
      blockNumber,
      blockHash,
    });
    await chain.final(blockNumber, blockHash);
    await eventually(
      async () => ((await getSession(api, made.body.id)).status === 'complete' ? true : undefined),
      `the ${currency} payment`,
    );
  };
  await pay('usdc', '300000000', 710_000);
  await pay('dai', '50000000000', 710_001);
  for (const groupBy of ['none', 'network']) {
    const volume = await api.get<Report>(`/api/v1/reports/volume?groupBy=${groupBy}`);
    t.is(volume.status, 200, JSON.stringify(volume.body));
    t.deepEqual(volume.body.columns.slice(0, 4), ['period', 'localDate', 'group', 'currency']);
    t.deepEqual(
      volume.body.data.map((r) => [r.currency, r.payments, r.grossVolume]),
      [
        ['dai', 1, '50000000000'],
        ['usdc', 1, '300000000'],
      ],
      `by ${groupBy}`,
    );
  }
  const openapi = (await (await fetch(`${weir.url}/api/v1/openapi.json`)).json()) as {
    components: { schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }> };
    paths: Record<string, { get?: { description?: string } }>;
  };
  t.truthy(openapi.components.schemas.ReportRow?.properties?.currency, 'ReportRow names the currency');
  // Weir takes no fee: the volume report says so rather than leaving a column of zeros unexplained.
  t.regex(
    openapi.paths['/api/v1/reports/{name}']?.get?.description ?? '',
    /fees is always 0: Weir is non-custodial and charges no processing fee.*netVolume is grossVolume less fees and gasFees/,
  );
});

test('subscriptions report: a paused subscription is not active at the period end and brings no MRR; resumed, it is again', async (t) => {
  const clock = createManualClock(Date.parse('2026-05-10T12:00:00Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const { api } = await createMerchant(weir.url, 'Shop');
  const { subscriptionId: id } = await subscribedToMonthlyPlan(t, weir, api);
  await eventually(
    async () =>
      (await api.get<{ status: string }>(`/api/v1/subscriptions/${id}`)).body.status === 'active' ? true : undefined,
    'the subscription to be active',
  );
  const figures = async () => {
    const report = await api.get<Report>('/api/v1/reports/subscriptions');
    t.is(report.status, 200, JSON.stringify(report.body));
    return report.body.data.map((r) => [r.period, r.activeAtEnd, r.mrr]);
  };
  t.deepEqual(await figures(), [['2026-05-01T00:00:00.000Z', 1, '1000000000']]);
  clock.advanceBy(24 * 60 * MINUTE);
  t.is((await api.post(`/api/v1/subscriptions/${id}/pause`)).status, 200);
  t.deepEqual(await figures(), [['2026-05-01T00:00:00.000Z', 0, '0']]);
  clock.set(Date.parse('2026-06-03T12:00:00Z'));
  t.is((await api.post(`/api/v1/subscriptions/${id}/resume`)).status, 200);
  t.deepEqual(await figures(), [
    ['2026-05-01T00:00:00.000Z', 0, '0'],
    ['2026-06-01T00:00:00.000Z', 1, '1000000000'],
  ]);
  // Day by day up to today: the quiet days keep their MRR, not a gap a chart would read as 0.
  clock.set(Date.parse('2026-06-05T12:00:00Z'));
  const days = await api.get<Report>(
    '/api/v1/reports/subscriptions?interval=day&from=2026-06-02&timezone=Europe/Paris',
  );
  t.is(days.status, 200, JSON.stringify(days.body));
  t.deepEqual(
    days.body.data.map((r) => [r.localDate, r.activeAtEnd, r.mrr]),
    [
      ['2026-06-02', 0, '0'],
      ['2026-06-03', 1, '1000000000'],
      ['2026-06-04', 1, '1000000000'],
      ['2026-06-05', 1, '1000000000'],
    ],
  );
});

test('analytics queries: an allowed pipeline runs over the tenant alone; writing stages, joins and code are refused, each named; a read-only key may query', async (t) => {
  const { shop, weir } = await history(t);
  const query = (pipeline: unknown[], collection = 'checkout_sessions') =>
    shop.api.post<{ data: Record<string, unknown>[] }>('/api/v1/analytics/query', { collection, pipeline });
  const counted = await query([
    { $match: { status: 'complete' } },
    { $group: { _id: '$currency', sessions: { $sum: 1 } } },
  ]);
  t.is(counted.status, 200, JSON.stringify(counted.body));
  t.deepEqual(counted.body.data, [{ _id: 'usdc', sessions: 3 }], "the other merchant's session is not counted");
  // Even a $match on another organization's id finds nothing: the tenant's $match ran first.
  const foreign = await query([{ $match: { organizationId: { $ne: 'x' } } }, { $count: 'n' }]);
  t.deepEqual(foreign.body.data, [{ n: 4 }]);

  const refused: [unknown[], string][] = [
    [[{ $out: 'stolen' }], 'pipeline[0].$out'],
    [[{ $merge: { into: 'checkout_sessions' } }], 'pipeline[0].$merge'],
    [
      [{ $lookup: { from: 'api_keys', localField: 'organizationId', foreignField: 'organizationId', as: 'k' } }],
      'pipeline[0].$lookup',
    ],
    [[{ $unionWith: 'api_key_secrets' }], 'pipeline[0].$unionWith'],
    [[{ $match: { $where: 'sleep(1000) || true' } }], 'pipeline[0].$match.$where'],
    [
      [{ $match: { $expr: { $function: { body: 'function () { return true }', args: [], lang: 'js' } } } }],
      'pipeline[0].$match.$expr.$function',
    ],
    [[{ $group: { _id: null, x: { $accumulator: {} } } }], 'pipeline[0].$group.x.$accumulator'],
  ];
  for (const [pipeline, field] of refused) assertError(t, await query(pipeline), 400, { field });
  assertError(t, await query([{ $match: {} }], 'api_keys'), 400, { field: 'collection' });
  // MongoDB's $median and $percentile are approximate: refused, pointing to the report whose medians are exact.
  const approximate: [unknown[], string][] = [
    [[{ $group: { _id: null, m: { $median: { input: '$amountTotal', method: 'approximate' } } } }], '$median'],
    [
      [{ $group: { _id: null, p: { $percentile: { input: '$amountTotal', p: [0.95], method: 'approximate' } } } }],
      '$percentile',
    ],
  ];
  for (const [pipeline, operator] of approximate)
    assertError(t, await query(pipeline), 400, {
      field: `pipeline[0].$group.${operator === '$median' ? 'm' : 'p'}.${operator}`,
      message: new RegExp(`\\${operator} is approximate.*/api/v1/reports/time-to-pay`),
    });
  const openapi = (await (await fetch(`${weir.url}/api/v1/openapi.json`)).json()) as {
    paths: Record<string, { post?: { description?: string } }>;
  };
  t.regex(
    openapi.paths['/api/v1/analytics/query']?.post?.description ?? '',
    /`\$median` and `\$percentile` are refused.*approximate.*time-to-pay/,
  );

  // Nested $maps over 100 values run 10^10 times per session: stopped after 5 s on the embedded store too, a 400.
  const nested = (levels: number): unknown =>
    levels === 0
      ? 1
      : { $map: { input: { $literal: Array.from({ length: 100 }, (_, i) => i) }, in: nested(levels - 1) } };
  assertError(t, await query([{ $project: { x: nested(5) } }]), 400, {
    field: 'pipeline',
    code: 'analytics_query_timeout',
    message: /stopped after 5 s/,
  });
  t.is((await fetch(`${weir.url}/health`)).status, 200);

  // A total past 2^53 - 1 would be wrong in its last digits: refused, naming where it is, never answered.
  assertError(t, await query([{ $count: 'n' }, { $project: { big: { $multiply: [9007199254740991, 3] } } }]), 400, {
    code: 'analytics_inexact_number',
    message: /data\[0\]\.big is \d+, past 2\^53 - 1/,
  });

  // An analyst's read-only key may query (a POST that only reads).
  const key = await shop.api.post<{ secretKey: string }>('/api/v1/api-keys', { name: 'analyst', scope: 'read' });
  t.is(key.status, 200, JSON.stringify(key.body));
  const analyst = apiClient(weir.url, key.body.secretKey);
  const asAnalyst = await analyst.post<{ data: unknown[] }>('/api/v1/analytics/query', {
    collection: 'checkout_sessions',
    pipeline: [{ $count: 'n' }],
  });
  t.is(asAnalyst.status, 200, JSON.stringify(asAnalyst.body));
  t.is((await analyst.get('/api/v1/reports/volume')).status, 200);
  assertError(t, await query([{ $match: {}, $limit: 1 }]), 400, { field: 'pipeline[0]' });
  // Nested thousands deep (the hostile suite's find): a 400 at the depth limit, not a blown stack.
  const depth = 2000;
  const deep = await fetch(`${weir.url}/api/v1/analytics/query`, {
    method: 'POST',
    headers: { authorization: `Bearer ${shop.testSecretKey}`, 'content-type': 'application/json' },
    body: `{"collection":"transactions","pipeline":[{"$match":${'[{"a":'.repeat(depth)}1${'}]'.repeat(depth)}}]}`,
  });
  t.is(deep.status, 400);
  t.regex(((await deep.json()) as { message: string }).message, /nests deeper than 32 levels/);
});

test("analytics queries: the README's way to sum an amount (integer strings) runs and gives the sum, not a 400", async (t) => {
  const { shop } = await history(t);
  const section = readmeSection('### Reports and analytics');
  const given = /take\s+`(\{"\$sum":[^`]+\})`/.exec(section)?.[1];
  if (given === undefined) return t.fail('the README no longer says how to sum an amount');
  const answer = await shop.api.post<{ data: { total: unknown }[] }>('/api/v1/analytics/query', {
    collection: 'checkout_sessions',
    pipeline: [{ $group: { _id: null, total: JSON.parse(given) as unknown } }],
  });
  t.is(answer.status, 200, JSON.stringify(answer.body));
  // 3.00 + 2.50 + 10.00 received, the unpaid session nothing: at the 10^8 scale.
  t.is(String(answer.body.data[0]?.total), '1550000000');
});

test('analytics queries: an answer nested thousands of levels deep is a 400 naming the limit, not a 500; what the stores answer differently ($toDecimal, $dateTrunc in a zone) is refused', async (t) => {
  const weir = await startTestWeir(t);
  const shop = await createMerchant(weir.url, 'Shop');
  t.is((await shop.api.post('/api/v1/checkout/sessions', sessionRequest('100000000', 1))).status, 200);
  const query = (pipeline: unknown[]) =>
    shop.api.post<{ data: Record<string, unknown>[] }>('/api/v1/analytics/query', {
      collection: 'checkout_sessions',
      pipeline,
    });
  // Each of 5000 pieces wraps the value so far: {a: {a: … null}}, deep enough to overflow a recursive walk.
  const nest = (pieces: number) => [
    {
      $project: {
        _id: 0,
        deep: {
          $reduce: {
            input: { $split: [{ $concat: ['x,'.repeat(pieces)] }, ','] },
            initialValue: null,
            in: { a: '$$value' },
          },
        },
      },
    },
  ];
  const deep = await query(nest(5000));
  assertError(t, deep, 400, { field: 'pipeline' });
  t.regex(JSON.stringify(deep.body), /more than 100 levels deep/);
  const shallow = await query(nest(3));
  t.is(shallow.status, 200, JSON.stringify(shallow.body));
  t.deepEqual(shallow.body.data, [{ deep: { a: { a: { a: { a: null } } } } }]);

  assertError(t, await query([{ $group: { _id: null, x: { $sum: { $toDecimal: '$amountTotal' } } } }]), 400, {
    field: 'pipeline[0].$group.x.$sum.$toDecimal',
  });
  const zoned = { $dateTrunc: { date: { $toDate: '$createdAt' }, unit: 'day', timezone: 'America/New_York' } };
  assertError(t, await query([{ $project: { day: zoned } }]), 400, { field: 'pipeline[0].$project.day.$dateTrunc' });
});

test('analytics queries: date parts, $dateToParts and $dateToString in a named zone or an offset answer as MongoDB (UTC, GMT, three-part names; %% and %z; a null date is null); a wall time a change skips is a 400 naming it', async (t) => {
  const weir = await startTestWeir(t);
  const shop = await createMerchant(weir.url, 'Shop');
  t.is((await shop.api.post('/api/v1/checkout/sessions', sessionRequest('100000000', 1))).status, 200);
  const query = (project: Record<string, unknown>) =>
    shop.api.post<{ data: Record<string, unknown>[] }>('/api/v1/analytics/query', {
      collection: 'checkout_sessions',
      pipeline: [{ $limit: 1 }, { $project: { _id: 0, ...project } }],
    });
  // 02:30Z on 1 January 2026: 23:30 on New Year's Eve in Buenos Aires, 22:00 in St John's (-03:30).
  const at = { $toDate: '2026-01-01T02:30:00Z' };
  const answer = await query({
    year: { $year: { date: at, timezone: 'America/Argentina/Buenos_Aires' } },
    hour: { $hour: { date: at, timezone: 'America/Argentina/Buenos_Aires' } },
    utc: { $hour: { date: at, timezone: 'UTC' } },
    gmt: { $dayOfMonth: { date: at, timezone: 'GMT' } },
    isoWeekYear: { $isoWeekYear: { date: at, timezone: '-03:00' } },
    // 04:30Z on 8 March is 23:30 on the 7th in New York (EST), 06:30Z is 01:30 and 07:30Z 03:30 (EDT).
    before: { $dayOfMonth: { date: { $toDate: '2026-03-08T04:30:00Z' }, timezone: 'America/New_York' } },
    after: { $hour: { date: { $toDate: '2026-03-08T07:30:00Z' }, timezone: 'America/New_York' } },
    parts: { $dateToParts: { date: at, timezone: 'America/St_Johns' } },
    written: { $dateToString: { date: at, timezone: 'America/St_Johns', format: '%Y-%m-%d %H:%M %z %Z 100%%' } },
    none: { $year: '$noSuchField' },
    noneWritten: { $dateToString: { date: '$noSuchField', format: '%Y' } },
  });
  t.is(answer.status, 200, JSON.stringify(answer.body));
  t.deepEqual(answer.body.data, [
    {
      year: 2025,
      hour: 23,
      utc: 2,
      gmt: 1,
      // Wednesday 31 December 2025 is in 2026's ISO week 1.
      isoWeekYear: 2026,
      before: 7,
      after: 3,
      parts: { year: 2025, month: 12, day: 31, hour: 23, minute: 0, second: 0, millisecond: 0 },
      written: '2025-12-31 23:00 -0330 -210 100%',
      none: null,
      noneWritten: null,
    },
  ]);
  // 02:30 on 8 March never shows on New York's clocks: refused, naming it, never an instant MongoDB may not give.
  const skipped = await query({
    d: { $dateFromParts: { year: 2026, month: 3, day: 8, hour: 2, minute: 30, timezone: 'America/New_York' } },
  });
  assertError(t, skipped, 400, {
    field: 'pipeline',
    message: /2026-03-08T02:30:00.000 does not exist in America\/New_York/,
  });
  assertError(t, await query({ h: { $hour: { date: at, timezone: 'america/new_york' } } }), 400, {
    field: 'pipeline',
    message: /unrecognized time zone identifier: "america\/new_york"/,
  });
});

test('volume reconciles with the confirmed incoming transactions: paid exactly, overpaid after completion, paid late after expiry, part-paid and completed as is, refunded; a closed day keeps its figures; payment-issues counts the short one alone', async (t) => {
  const clock = createManualClock(Date.parse('2026-03-02T10:00:00Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const { api } = await createMerchant(weir.url, 'Shop');
  const chain = chainPublisher(weir.bus);
  const create = async () => {
    const made = await api.post<Session & { expiresAt: string }>(
      '/api/v1/checkout/sessions',
      sessionRequest('300000000', 1),
    );
    t.is(made.status, 200, JSON.stringify(made.body));
    return made.body;
  };
  const report = async (query: string) => {
    const answer = await api.get<Report>(`/api/v1/reports/${query}`);
    t.is(answer.status, 200, JSON.stringify(answer.body));
    return answer.body.data;
  };
  // 2 March: one paid exactly (then refunded), one overpaid later, one part-paid and completed as is.
  const exact = (await payInFull(weir, api, await create())) as Paid;
  const over = await create();
  const overShown = await reveal(weir, api, over.id);
  await payInFull(weir, api, over);
  const part = await create();
  await payPart(weir, api, part.id);
  const asIs = await api.post(`/api/v1/checkout/sessions/${part.id}/complete-partial-checkout-session`, {});
  t.is(asIs.status, 200, JSON.stringify(asIs.body));
  const expiring = await create();
  const expiringShown = await reveal(weir, api, expiring.id);
  const refunded = await api.post(`/api/v1/payment-intents/${exact.paymentIntent.id}/mark-as-refund`, {});
  t.is(refunded.status, 200, JSON.stringify(refunded.body));
  const firstDay = await report('volume?interval=day&to=2026-03-02');

  // 5 March: the expiring session has expired and is paid in full late; the overpaid one gets 1.00 more.
  clock.set(Date.parse('2026-03-05T09:00:00Z'));
  await eventually(
    async () => ((await getSession(api, expiring.id)).status === 'expired' ? true : undefined),
    'the session to expire',
  );
  await payLate(weir, api, expiring.id, expiringShown);
  const blockHash = randomHash();
  await chain.transfer({ to: overShown.address, amount: '1000000', blockNumber: 720_000, blockHash });
  await chain.final(720_000, blockHash);
  await eventually(
    async () => ((await getSession(api, over.id)).amountReceived === '400000000' ? true : undefined),
    'the overpayment',
  );

  // Every confirmed incoming transaction counts in volume, once, in its currency.
  const incoming = (
    await api.get<Page<{ amount: string; currency: string }>>(
      '/api/v1/transactions?type=incoming&status=confirmed&limit=100',
    )
  ).body;
  t.is(incoming.count, 5);
  const received = incoming.data.reduce((sum, tx) => sum + BigInt(tx.amount), 0n);
  const volume = await report('volume?interval=month');
  t.deepEqual(
    volume.map((r) => [r.currency, r.payments, r.grossVolume, r.lateVolume]),
    [['usdc', 5, received.toString(), '300000000']],
  );
  t.is(received, 300000000n + 400000000n + 100000000n + 300000000n);
  // 2 March as reported then: the later money came on 5 March.
  t.deepEqual(await report('volume?interval=day&to=2026-03-02'), firstDay);
  t.deepEqual(
    (await report('volume?interval=day')).map((r) => [r.period, r.payments, r.grossVolume]),
    [
      ['2026-03-02T00:00:00.000Z', 3, '700000000'],
      ['2026-03-05T00:00:00.000Z', 2, '400000000'],
    ],
  );
  // What was kept: gross less what was marked refunded, from the same sessions' money.
  const [refunds] = await report('refunds?interval=month');
  t.is(BigInt(String(volume[0]!.grossVolume)) - BigInt(String(refunds!.amountRefunded)), 800000000n);
  // Underpaid: only the one completed as is (the one paid in full late is not, nor one still waiting).
  const [issues] = await report('payment-issues?interval=month');
  t.like(issues, { underpaidSessions: 1, latePayments: 1, overpaidSessions: 1 });
});

/** A maker of USDC products with a default price each, for the reports by product. */
const catalogProduct =
  (t: ExecutionContext, api: ReturnType<typeof apiClient>) =>
  async (name: string, unitAmount: string): Promise<{ productId: string; priceId: string }> => {
    const made = await api.post<{ id: string; defaultPrice: { id: string } }>('/api/v1/products', {
      name,
      defaultPriceData: { currency: 'usdc', unitAmount },
    });
    t.is(made.status, 200, JSON.stringify(made.body));
    return { productId: made.body.id, priceId: made.body.defaultPrice.id };
  };

test('volume by product counts an invoice’s lines under their own products, not one product named for the invoice: a catalog product sold on a session and billed on an invoice adds up', async (t) => {
  const clock = createManualClock(Date.parse('2026-03-02T10:00:00Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const { api } = await createMerchant(weir.url, 'Shop');
  const product = catalogProduct(t, api);
  const audit = await product('Audit', '300000000');
  const support = await product('Support', '50000000');
  // 3.00 of Audit sold on a session.
  const sale = await api.post<Session>('/api/v1/checkout/sessions', {
    successUrl: 'https://shop.example/ok',
    lineItems: { data: [{ priceId: audit.priceId, quantity: 1 }] },
  });
  t.is(sale.status, 200, JSON.stringify(sale.body));
  await payInFull(weir, api, sale.body);
  // An invoice of 2 × Audit and 1 × Support (6.50), paid on its pay page's session.
  const customer = await api.post<{ id: string }>('/api/v1/customers', { email: 'buyer@example.com' });
  const invoice = await api.post<{ id: string }>('/api/v1/invoices', {
    customerId: customer.body.id,
    lineItems: {
      data: [
        { priceId: audit.priceId, quantity: 2 },
        { priceId: support.priceId, quantity: 1 },
      ],
    },
  });
  t.is(invoice.status, 200, JSON.stringify(invoice.body));
  t.is((await api.post(`/api/v1/invoices/${invoice.body.id}/finalize`)).status, 200);
  const pay = await fetch(`${weir.url}/invoices/${invoice.body.id}/pay`, { redirect: 'manual' });
  t.is(pay.status, 302);
  const invoiceSession = await getSession(api, pay.headers.get('location')!.split('/').pop()!);
  await payInFull(weir, api, invoiceSession);
  await eventually(async () => {
    const paid = await api.get<{ status: string }>(`/api/v1/invoices/${invoice.body.id}`);
    return paid.body.status === 'paid' ? true : undefined;
  }, 'the invoice to be paid');

  const byProduct = await api.get<Report>('/api/v1/reports/volume?groupBy=product');
  t.is(byProduct.status, 200, JSON.stringify(byProduct.body));
  t.deepEqual(
    byProduct.body.data
      .map((r) => [r.group, r.payments, r.grossVolume])
      .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    [
      [audit.productId, 2, '900000000'],
      [support.productId, 1, '50000000'],
    ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
  );
  // What was sold adds up to what was received.
  const [all] = (await api.get<Report>('/api/v1/reports/volume')).body.data;
  t.is(all?.grossVolume, '950000000');
});

test('volume by product takes each line’s share of its session’s discount off: a promotion code’s half off two products adds up to what was received', async (t) => {
  const weir = await startTestWeir(t, {}, { clock: createManualClock(Date.parse('2026-03-02T10:00:00Z')) });
  const { api } = await createMerchant(weir.url, 'Shop');
  const product = catalogProduct(t, api);
  const audit = await product('Audit', '300000000');
  const support = await product('Support', '50000000');
  const coupon = await api.post('/api/v1/coupons', {
    name: 'Half',
    percentOff: 50,
    promotionCodeData: { data: [{ code: 'HALF' }] },
  });
  t.is(coupon.status, 200, JSON.stringify(coupon.body));
  const created = await api.post<Session>('/api/v1/checkout/sessions', {
    successUrl: 'https://shop.example/ok',
    allowPromotionCodes: true,
    lineItems: {
      data: [
        { priceId: audit.priceId, quantity: 1 },
        { priceId: support.priceId, quantity: 1 },
      ],
    },
  });
  t.is(created.status, 200, JSON.stringify(created.body));
  const applied = await apiClient(weir.url).post(`/checkout/${created.body.id}/promotion-code`, { code: 'HALF' });
  t.is(applied.status, 200, JSON.stringify(applied.body));
  const session = await getSession(api, created.body.id);
  t.deepEqual(
    session.lineItems.data.map((line) => line.amountDiscount),
    ['150000000', '25000000'],
  );
  await payInFull(weir, api, session);

  const byProduct = await api.get<Report>('/api/v1/reports/volume?groupBy=product');
  t.is(byProduct.status, 200, JSON.stringify(byProduct.body));
  t.deepEqual(
    byProduct.body.data
      .map((r) => [r.group, r.payments, r.grossVolume])
      .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    [
      [audit.productId, 1, '150000000'],
      [support.productId, 1, '25000000'],
    ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
  );
  const [all] = (await api.get<Report>('/api/v1/reports/volume')).body.data;
  t.is(all?.grossVolume, '175000000');
});

test('volume by product: a subscription’s renewal, paid on its invoice, counts under the plan’s product with its first payment', async (t) => {
  const clock = createManualClock(Date.parse('2026-05-10T12:00:00Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const { api } = await createMerchant(weir.url, 'Shop');
  const first = await subscribedToMonthlyPlan(t, weir, api);
  clock.set(Date.parse('2026-06-10T12:00:00Z'));
  const renewal = await eventually(async () => {
    const s = await api.get<{ latestInvoiceId: string | null }>(`/api/v1/subscriptions/${first.subscriptionId}`);
    return s.body.latestInvoiceId ?? undefined;
  }, 'the renewal invoice');
  await eventually(async () => {
    const invoice = await api.get<{ status: string }>(`/api/v1/invoices/${renewal}`);
    return invoice.body.status === 'open' ? true : undefined;
  }, 'the renewal to be issued');
  const pay = await fetch(`${weir.url}/invoices/${renewal}/pay`, { redirect: 'manual' });
  t.is(pay.status, 302);
  await payInFull(weir, api, await getSession(api, pay.headers.get('location')!.split('/').pop()!));
  await eventually(async () => {
    const invoice = await api.get<{ status: string }>(`/api/v1/invoices/${renewal}`);
    return invoice.body.status === 'paid' ? true : undefined;
  }, 'the renewal to be paid');

  const byProduct = await api.get<Report>('/api/v1/reports/volume?groupBy=product');
  t.is(byProduct.status, 200, JSON.stringify(byProduct.body));
  t.deepEqual(
    byProduct.body.data.map((r) => [r.period, r.group, r.payments, r.grossVolume]),
    [
      ['2026-05-01T00:00:00.000Z', first.productId, 1, '1000000000'],
      ['2026-06-01T00:00:00.000Z', first.productId, 1, '1000000000'],
    ],
  );
});
