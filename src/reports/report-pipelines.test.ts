import { readmeSection, tableRows } from '../../test/support/readme.ts';
import test from 'ava';
import {
  confirmed,
  created,
  daiPaymentFixture,
  detected,
  paymentFixture,
  sessionFixture,
} from '../../machines/checkout-session.fixture.ts';
import type { CheckoutSessionEvent, SessionSweep } from '../../machines/checkout-session.types.ts';
import {
  canceled,
  created as subscriptionCreated,
  issued,
  markedUnpaid,
  missed,
  renewalBill,
  renewalPaid,
  started,
  subscriptionFixture,
} from '../../machines/subscription.fixture.ts';
import type { SubscriptionEvent } from '../../machines/subscription.types.ts';
import { checkoutSessionsProjection } from '../projections/checkout-sessions.projection.ts';
import { subscriptionsProjection } from '../projections/subscriptions.projection.ts';
import { createTestLog } from '../projections/test-log.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import { ValidationError } from '../shared/errors.ts';
import {
  REPORTS,
  type ReportName,
  type ReportParams,
  reportColumns,
  reportTime,
  runReport,
  withLocalDates,
} from './report-pipelines.ts';

const TENANT = { organizationId: 'o1', environment: 'test' as const };

/**
 * Subscriptions of organization o1 (and one of another), as the read model holds the fields the
 * report reads: started (their first bill paid) when created unless given.
 */
const subscription = (id: string, fields: Record<string, unknown>) => ({
  _id: id,
  ...TENANT,
  status: 'active',
  currency: 'usdc',
  interval: 'month',
  intervalCount: 1,
  amountTotal: '1000000000',
  endedAt: null,
  pastDueSince: null,
  startedAt: fields.createdAt,
  ...fields,
});

test('subscriptions by month: new, churned and past due per month, and MRR at each month end with yearly and weekly prices brought to a month', async (t) => {
  const store = createEmbeddedReadStore({});
  const subscriptions = store.collection<Record<string, unknown> & { _id: string }>('subscriptions');
  for (const doc of [
    subscription('jan-monthly', { createdAt: '2026-01-05T00:00:00Z' }),
    // 120.00 a year is 10.00 a month.
    subscription('jan-yearly', { createdAt: '2026-01-20T00:00:00Z', interval: 'year', amountTotal: '12000000000' }),
    // 3.00 every 2 weeks: 3 × 52 / 12 / 2 = 6.50 a month.
    subscription('feb-weekly', {
      createdAt: '2026-02-02T00:00:00Z',
      interval: 'week',
      intervalCount: 2,
      amountTotal: '300000000',
    }),
    subscription('feb-ended', {
      createdAt: '2026-02-10T00:00:00Z',
      status: 'canceled',
      endedAt: '2026-03-15T00:00:00Z',
    }),
    subscription('mar-late', {
      createdAt: '2026-03-01T00:00:00Z',
      status: 'past_due',
      pastDueSince: '2026-03-31T00:00:00Z',
      pastDues: [{ since: '2026-03-31T00:00:00Z', unpaidAt: null, until: null }],
    }),
    subscription('never-paid', { createdAt: '2026-03-02T00:00:00Z', status: 'incomplete', startedAt: null }),
    { ...subscription('other-org', { createdAt: '2026-01-01T00:00:00Z' }), organizationId: 'o2' },
  ])
    await subscriptions.put(doc);
  const params: ReportParams = { ...TENANT, interval: 'month', groupBy: 'none' };
  const report = REPORTS.subscriptions;
  const rows = report.rows(await subscriptions.aggregate(report.pipeline(params)), params);
  t.deepEqual(rows, [
    {
      period: '2026-01-01T00:00:00.000Z',
      group: null,
      currency: 'usdc',
      newSubscriptions: 2,
      churned: 0,
      pastDue: 0,
      activeAtEnd: 2,
      mrr: '2000000000',
    },
    {
      period: '2026-02-01T00:00:00.000Z',
      group: null,
      currency: 'usdc',
      newSubscriptions: 2,
      churned: 0,
      pastDue: 0,
      activeAtEnd: 4,
      mrr: '3650000000',
    },
    {
      period: '2026-03-01T00:00:00.000Z',
      group: null,
      currency: 'usdc',
      newSubscriptions: 1,
      churned: 1,
      pastDue: 1,
      activeAtEnd: 4,
      mrr: '3650000000',
    },
  ]);
});

/** Subscriptions of organization o1, each with its history, by the subscriptions projection. */
async function projectedSubscriptions(histories: [string, SubscriptionEvent[]][]) {
  const { events, append } = createTestLog('2026-01-01T00:00:00.000Z');
  for (const [id, history] of histories) for (const event of history) append(`subscription-${id}`, event, 'o1');
  const store = createEmbeddedReadStore({});
  for (const event of events) await subscriptionsProjection.apply(event, store);
  return store;
}

/** The monthly fixture of organization o1, created at `createdAt` (its first checkout session lapsing an hour later), or a trial to `trialEnd`. */
const subscribed = (createdAt: string, trialEnd?: string): SubscriptionEvent =>
  subscriptionCreated(
    subscriptionFixture({
      organizationId: 'o1',
      createdAt,
      ...(trialEnd
        ? { trialEnd, firstBill: null }
        : {
            firstBill: {
              id: 'cs-1',
              kind: 'checkout_session',
              dueAt: new Date(Date.parse(createdAt) + 3_600_000).toISOString(),
            },
          }),
    }),
  );

const subscriptionFigures = async (store: Awaited<ReturnType<typeof projectedSubscriptions>>, now: string) =>
  (await runReport(store, 'subscriptions', { ...TENANT, interval: 'month', groupBy: 'none', now })).map((row) => [
    row.period.slice(0, 7),
    row.newSubscriptions,
    row.churned,
    row.pastDue,
    row.activeAtEnd,
    row.mrr,
  ]);

test('subscriptions: one counts from its first bill paid: never paid and ended, or a trial ended before its first charge, is in no figure; a trial brings no MRR until paid', async (t) => {
  const MAY_31 = '2026-05-31T23:00:00.000Z';
  const trialBill = renewalBill('inv-t', '2026-06-03T00:00:00.000Z', '2026-07-03T00:00:00.000Z');
  const store = await projectedSubscriptions([
    // Ended by the merchant on 1 June while still incomplete: never paid.
    ['ended-unpaid', [subscribed(MAY_31), canceled('2026-06-01T00:00:00.000Z')]],
    // Created on 31 May, its checkout session paid on 1 June: new in June.
    ['paid-next-day', [subscribed(MAY_31), started('cs-1', '2026-06-01T00:10:00.000Z')]],
    // A trial from May ended before its first invoice was paid.
    [
      'trial-ended',
      [
        subscribed('2026-05-20T00:00:00.000Z', '2026-06-03T00:00:00.000Z'),
        issued(trialBill),
        canceled('2026-06-05T00:00:00.000Z'),
      ],
    ],
    // A trial from May paid at its end, in June.
    [
      'trial-paid',
      [
        subscribed('2026-05-20T00:00:00.000Z', '2026-06-03T00:00:00.000Z'),
        issued(trialBill),
        started('inv-t', '2026-06-04T00:00:00.000Z'),
      ],
    ],
    // A trial whose first invoice went past due on 6 June, paid on the 10th: it starts then.
    [
      'trial-late',
      [
        subscribed('2026-05-20T00:00:00.000Z', '2026-06-03T00:00:00.000Z'),
        issued(trialBill),
        missed('inv-t', '2026-06-06T00:00:00.000Z'),
        renewalPaid('inv-t', '2026-06-10T00:00:00.000Z'),
      ],
    ],
    // A trial still going: nothing yet.
    ['trialing', [subscribed('2026-05-25T00:00:00.000Z', '2026-07-25T00:00:00.000Z')]],
  ]);
  t.deepEqual(await subscriptionFigures(store, '2026-06-30T00:00:00.000Z'), [['2026-06', 3, 0, 1, 3, '3000000000']]);
});

test('subscriptions: pastDue counts each subscription in the period it went past due, whatever became of it after; an unpaid one brings no MRR until its bill is settled', async (t) => {
  const JAN = '2026-01-01T00:00:00.000Z';
  const store = await projectedSubscriptions([
    // Past due on 4 February, paid on 2 March.
    ['recovered', [subscribed(JAN), started(), issued(), missed(), renewalPaid('inv-2', '2026-03-02T00:00:00.000Z')]],
    // Past due on 4 February, unpaid from the 11th, its bill voided on 5 April.
    [
      'unpaid',
      [
        subscribed(JAN),
        started(),
        issued(),
        missed(),
        markedUnpaid(),
        { type: 'RenewalInvoiceVoided', data: { invoiceId: 'inv-2', at: '2026-04-05T00:00:00.000Z' } },
      ],
    ],
  ]);
  t.deepEqual(await subscriptionFigures(store, '2026-04-30T00:00:00.000Z'), [
    ['2026-01', 2, 0, 0, 2, '2000000000'],
    ['2026-02', 0, 0, 2, 1, '1000000000'],
    ['2026-03', 0, 0, 0, 1, '1000000000'],
    ['2026-04', 0, 0, 0, 2, '2000000000'],
  ]);
  t.regex(REPORTS.subscriptions.about ?? '', /nor an unpaid one/);
});

/**
 * A complete session of organization o1, paid 5 minutes after it was made, as the reports read it:
 * each of its `payments` (one on base unless given) confirmed at its completion for its amountReceived,
 * the first paying its fee and gas fee.
 */
const completeSession = (id: string, fields: Record<string, unknown>) => {
  const completedAt = (fields.completedAt as string | undefined) ?? '2026-03-02T10:05:00Z';
  const payments = (fields.payments as Record<string, unknown>[] | undefined) ?? [{ network: 'base' }];
  return {
    _id: id,
    ...TENANT,
    status: 'complete',
    currency: 'usdc',
    createdAt: '2026-03-02T10:00:00Z',
    completedAt,
    ...fields,
    payments: payments.map((payment, i) => ({
      status: 'confirmed',
      confirmedAt: completedAt,
      late: false,
      amount: fields.amountReceived ?? '0',
      amountRaw: fields.amountReceived ?? '0',
      asset: { decimals: 8 },
      feeShare:
        i === 0 ? { fee: fields.amountFee ?? '0', gasFee: fields.amountGasFee ?? '0' } : { fee: '0', gasFee: '0' },
      ...payment,
    })),
  };
};

test('money sums stay exact past 2^53 base units', async (t) => {
  const store = createEmbeddedReadStore({});
  const sessions = store.collection<Record<string, unknown> & { _id: string }>('checkout_sessions');
  const big = '123456789012345678901';
  for (const id of ['a', 'b', 'c'])
    await sessions.put(
      completeSession(id, {
        amountTotal: big,
        amountReceived: big,
        amountFee: '1',
        amountGasFee: '99999999',
        paymentLinkId: null,
      }),
    );
  const params: ReportParams = { ...TENANT, interval: 'day', groupBy: 'none' };
  const [row] = REPORTS.volume.rows(await sessions.aggregate(REPORTS.volume.pipeline(params)), params);
  t.is(row?.grossVolume, (3n * BigInt(big)).toString());
  t.is(row?.netVolume, (3n * BigInt(big) - 3n - 3n * 99999999n).toString());
});

test('volume: gasFees is the network fee payers paid on top of the price; operatorSweepGas, by network only, is what the sweeper paid to sweep those deposits, exact past 2^53', async (t) => {
  const store = createEmbeddedReadStore({});
  const sessions = store.collection<Record<string, unknown> & { _id: string }>('checkout_sessions');
  // Wei: 6 ETH of sweep gas per session, more than 2^53 wei once summed.
  const wei = '6000000000000000000';
  const sweep = (network: string, gasCost: string, fields: Record<string, unknown> = {}) => ({
    network,
    chainId: 1,
    transactionHash: `0x${network}${gasCost}`,
    transferIds: ['tr'],
    gasUsed: '21000',
    gasCost,
    at: '2026-03-02T11:00:00Z',
    ...fields,
  });
  for (const [id, network, amountGasFee, sweeps] of [
    ['a', 'base', '25000', [sweep('base', wei)]],
    // A reverted sweep's gas was paid too, and the deposit swept again.
    ['b', 'base', '0', [sweep('base', '7', { reverted: true, transferIds: [] }), sweep('base', wei)]],
    // Paid on Tron: its sweep cost sun, never added to Base's wei.
    ['c', 'tron', '0', [sweep('tron', '3500000')]],
    // Not swept yet: no gas.
    ['d', 'base', '0', []],
  ] as const)
    await sessions.put(
      completeSession(id, {
        amountTotal: '100000000',
        amountReceived: '100000000',
        amountFee: '0',
        amountGasFee,
        payments: [{ network }],
        sweeps,
        paymentLinkId: null,
      }),
    );
  const params = { ...TENANT, interval: 'all', from: '2026-03-01T00:00:00.000Z' } as const;
  const byNetwork = await runReport(store, 'volume', { ...params, groupBy: 'network' });
  t.deepEqual(
    byNetwork.map((row) => [row.group, row.grossVolume, row.gasFees, row.netVolume, row.operatorSweepGas]),
    [
      ['base', '300000000', '25000', '299975000', (2n * BigInt(wei) + 7n).toString()],
      ['tron', '100000000', '0', '100000000', '3500000'],
    ],
  );
  // Wei and sun do not add up: across networks the figure is not given.
  const [all] = await runReport(store, 'volume', { ...params, groupBy: 'currency' });
  t.like(all, { group: 'usdc', gasFees: '25000', operatorSweepGas: null });
  t.regex(REPORTS.volume.about ?? '', /gasFees is the network fee payers paid on top of the price/);
  t.regex(REPORTS.volume.about ?? '', /operatorSweepGas/);
});

test('volume by network: every FundsSwept of the history counts its gas once, under the network it was paid on, and each payment under the network it was paid on (a session paid on two networks counts on both)', async (t) => {
  const { events, append } = createTestLog('2026-03-02T10:00:00.000Z');
  const swept = (network: string, gasCost: string, fields: Partial<SessionSweep> = {}): CheckoutSessionEvent => ({
    type: 'FundsSwept',
    data: {
      sweep: {
        network,
        chainId: network === 'tron' ? 728126428 : 7357,
        transactionHash: `0x${network}${gasCost}`,
        transferIds: ['t'],
        gasUsed: '21000',
        gasCost,
        at: '2026-03-02T11:00:00.000Z',
        ...fields,
      },
    },
  });
  const completed: CheckoutSessionEvent = {
    type: 'CheckoutSessionCompleted',
    data: {
      amountReceived: '300000000',
      amountOverpaid: '0',
      transactionHash: null,
      partial: false,
      at: '2026-03-02T10:05:00.000Z',
    },
  };
  // Session one: paid part on Tron, the rest (last) on weir-testnet; each deposit swept on its own network.
  const one = sessionFixture({ id: 'one', organizationId: 'o1' });
  const onTron: CheckoutSessionEvent = {
    type: 'PaymentDetected',
    data: {
      payment: {
        ...paymentFixture('t-tron', '100000000'),
        network: 'tron',
        chainId: 728126428,
        status: 'pending',
        detectedAt: '2026-03-02T10:01:00.000Z',
        confirmedAt: null,
        late: false,
      },
    },
  };
  for (const event of [
    created(one),
    onTron,
    confirmed('t-tron', '2026-03-02T10:03:00.000Z'),
    detected('t-evm', '200000000', '2026-03-02T10:02:00.000Z'),
    confirmed('t-evm', '2026-03-02T10:04:00.000Z'),
    completed,
    swept('tron', '3500000', {
      tron: { energyUsed: '1', bandwidthUsed: '1', trxBurnt: '3500000', energySource: 'rented', rentalCost: '900000' },
    }),
    // A reverted sweep's gas was paid too.
    swept('weir-testnet', '7', { reverted: true, transferIds: [] }),
    swept('weir-testnet', '6000000000000000000'),
  ])
    append('checkout_session-one', event, 'o1');
  // Session two: paid and swept on weir-testnet only.
  const two = sessionFixture({ id: 'two', organizationId: 'o1' });
  for (const event of [
    created(two),
    detected('t-two', '300000000'),
    confirmed('t-two', '2026-03-02T10:04:00.000Z'),
    completed,
    swept('weir-testnet', '5'),
  ])
    append('checkout_session-two', event, 'o1');
  const store = createEmbeddedReadStore({});
  for (const event of events) await checkoutSessionsProjection.apply(event, store);

  const gasByNetwork = new Map<string, bigint>();
  for (const event of events)
    if (event.type === 'FundsSwept') {
      const { sweep } = event.data as { sweep: SessionSweep };
      gasByNetwork.set(sweep.network, (gasByNetwork.get(sweep.network) ?? 0n) + BigInt(sweep.gasCost));
    }
  const rows = await runReport(store, 'volume', { ...TENANT, interval: 'all', groupBy: 'network' });
  t.deepEqual(
    rows.map((row) => [row.group, row.operatorSweepGas]),
    [...gasByNetwork].sort(([a], [b]) => a.localeCompare(b)).map(([network, gas]) => [network, gas.toString()]),
  );
  // Each payment counts under the network it was paid on: session one's part on Tron there.
  t.like(
    rows.find((row) => row.group === 'weir-testnet'),
    { payments: 2, grossVolume: '500000000' },
  );
  t.like(
    rows.find((row) => row.group === 'tron'),
    { payments: 1, grossVolume: '100000000', operatorSweepGas: '3500000' },
  );
});

/** Completed sessions, each `[id, createdAt, completedAt]`, in a fresh store. */
async function paidSessions(times: readonly (readonly [string, string, string])[]) {
  const store = createEmbeddedReadStore({});
  const sessions = store.collection<Record<string, unknown> & { _id: string }>('checkout_sessions');
  for (const [id, created, completed] of times)
    await sessions.put(completeSession(id, { createdAt: created, completedAt: completed }));
  return store;
}

test('time to pay over the whole range (interval all): one row, its median and p95 over every day’s payments, not a mean of daily medians', async (t) => {
  // Day one: 60 s and 600 s; day two: 120 s. Daily medians 330 and 120; over all three, 120.
  const store = await paidSessions([
    ['a', '2026-03-02T10:00:00Z', '2026-03-02T10:01:00Z'],
    ['b', '2026-03-02T11:00:00Z', '2026-03-02T11:10:00Z'],
    ['c', '2026-03-03T09:00:00Z', '2026-03-03T09:02:00Z'],
  ]);
  const from = '2026-03-01T00:00:00.000Z';
  const rows = await runReport(store, 'time-to-pay', { ...TENANT, interval: 'all', groupBy: 'none', from });
  t.deepEqual(rows, [{ period: from, group: null, payments: 3, medianSeconds: 120, p95Seconds: 600 }]);
  const daily = await runReport(store, 'time-to-pay', { ...TENANT, interval: 'day', groupBy: 'none', from });
  t.deepEqual(
    daily.map((row) => [row.period, row.medianSeconds]),
    [
      ['2026-03-02T00:00:00.000Z', 330],
      ['2026-03-03T00:00:00.000Z', 120],
    ],
  );
});

test('the median of an even count is the mean of the two middle times (not the lower one); p95 stays nearest rank, a real payment’s time', async (t) => {
  const from = '2026-03-01T00:00:00.000Z';
  const params = { ...TENANT, interval: 'all', groupBy: 'none', from } as const;
  const two = await paidSessions([
    ['a', '2026-03-02T10:00:00Z', '2026-03-02T10:04:00Z'],
    ['b', '2026-03-02T11:00:00Z', '2026-03-02T11:10:00Z'],
  ]);
  t.like((await runReport(two, 'time-to-pay', params))[0], { payments: 2, medianSeconds: 420, p95Seconds: 600 });
  const four = await paidSessions([
    ['a', '2026-03-02T10:00:00Z', '2026-03-02T10:10:00Z'],
    ['b', '2026-03-02T11:00:00Z', '2026-03-02T11:01:00Z'],
    ['c', '2026-03-02T12:00:00Z', '2026-03-02T12:03:00Z'],
    ['d', '2026-03-02T13:00:00Z', '2026-03-02T13:02:00Z'],
  ]);
  t.like((await runReport(four, 'time-to-pay', params))[0], { payments: 4, medianSeconds: 150, p95Seconds: 600 });
  // Times are whole milliseconds: a mean that falls on half a millisecond rounds up to the next.
  const halves = await paidSessions([
    ['a', '2026-03-02T10:00:00.000Z', '2026-03-02T10:00:01.001Z'],
    ['b', '2026-03-02T11:00:00.000Z', '2026-03-02T11:00:01.002Z'],
  ]);
  t.like((await runReport(halves, 'time-to-pay', params))[0], { medianSeconds: 1.002, p95Seconds: 1.002 });
});

test('the median of an odd count is the middle time', async (t) => {
  const from = '2026-03-01T00:00:00.000Z';
  const five = await paidSessions([
    ['a', '2026-03-02T10:00:00Z', '2026-03-02T10:10:00Z'],
    ['b', '2026-03-02T11:00:00Z', '2026-03-02T11:01:00Z'],
    ['c', '2026-03-02T12:00:00Z', '2026-03-02T12:03:00Z'],
    ['d', '2026-03-02T13:00:00Z', '2026-03-02T13:02:00Z'],
    ['e', '2026-03-02T14:00:00.000Z', '2026-03-02T14:02:30.250Z'],
  ]);
  const [row] = await runReport(five, 'time-to-pay', { ...TENANT, interval: 'all', groupBy: 'none', from });
  t.like(row, { payments: 5, medianSeconds: 150.25, p95Seconds: 600 });
});

/**
 * One history, by the checkout sessions projection: 1.00 of 3.00 USDC completed as is (March); 5.00
 * DAI for 3.00 (March), then 0.50 DAI more confirmed in April; 3.00 USDC paid late to a session that
 * expired in March, confirmed in April; 1.00 USDC paid late to another; one waiting on a payment not
 * yet confirmed; one whose only payment a reorg withdrew. `upTo` stops each history at the first event naming it.
 */
async function paymentHistory(upTo?: string) {
  const { events, append } = createTestLog('2026-03-02T10:00:00.000Z');
  const march = '2026-03-02T10:05:00.000Z';
  const april = '2026-04-03T09:00:00.000Z';
  const completed = (amountReceived: string, amountOverpaid: string, partial: boolean): CheckoutSessionEvent => ({
    type: 'CheckoutSessionCompleted',
    data: { amountReceived, amountOverpaid, transactionHash: null, partial, at: march },
  });
  const expired: CheckoutSessionEvent = { type: 'CheckoutSessionExpired', data: { at: march } };
  const late = (transferId: string, amount: string): CheckoutSessionEvent => ({
    type: 'LatePaymentReceived',
    data: { transferId, amount, at: april },
  });
  const histories: [string, CheckoutSessionEvent[], Partial<Parameters<typeof sessionFixture>[0]>?][] = [
    [
      'part',
      [
        detected('t-part', '100000000', march),
        confirmed('t-part', march),
        { type: 'CheckoutSessionPartiallyPaid', data: { amountReceived: '100000000', at: march } },
        completed('100000000', '0', true),
      ],
    ],
    [
      'over',
      [
        detected('t-over', '500000000', march),
        confirmed('t-over', march),
        completed('500000000', '200000000', false),
        detected('t-more', '50000000', april),
        confirmed('t-more', april),
        {
          type: 'OverpaymentReceived',
          data: { transferId: 't-more', amount: '50000000', amountOverpaid: '250000000', at: april },
        },
      ],
      { currency: 'dai' },
    ],
    [
      'late-full',
      [expired, detected('t-late', '300000000', april), confirmed('t-late', april), late('t-late', '300000000')],
    ],
    [
      'late-part',
      [expired, detected('t-short', '100000000', april), confirmed('t-short', april), late('t-short', '100000000')],
    ],
    ['pending', [detected('t-pending', '300000000', march)]],
    [
      'withdrawn',
      [
        detected('t-gone', '300000000', march),
        { type: 'PaymentWithdrawn', data: { transferId: 't-gone', reason: 'reorg', at: march } },
        expired,
      ],
    ],
  ];
  for (const [id, history, fields] of histories) {
    append(
      `checkout_session-${id}`,
      created(sessionFixture({ id, organizationId: 'o1', createdAt: march, ...fields })),
      'o1',
    );
    for (const event of history) {
      if (upTo && JSON.stringify(event).includes(upTo)) break;
      append(`checkout_session-${id}`, event, 'o1');
    }
  }
  const store = createEmbeddedReadStore({});
  for (const event of events) await checkoutSessionsProjection.apply(event, store);
  return store;
}

test('volume counts money when it was confirmed: a session completed as is counts its part, an overpayment after completion and a late payment after expiry count in the month they came, so March stays as reported', async (t) => {
  const store = await paymentHistory();
  const rows = await runReport(store, 'volume', { ...TENANT, interval: 'month', groupBy: 'currency' });
  t.deepEqual(
    rows.map((row) => [
      row.period.slice(0, 7),
      row.group,
      row.payments,
      row.grossVolume,
      row.lateVolume,
      row.netVolume,
    ]),
    [
      ['2026-03', 'dai', 1, '500000000', '0', '500000000'],
      ['2026-03', 'usdc', 1, '100000000', '0', '100000000'],
      ['2026-04', 'dai', 1, '50000000', '0', '50000000'],
      ['2026-04', 'usdc', 2, '400000000', '400000000', '400000000'],
    ],
  );
  // March as reported before April's money came: the same figures.
  const before = await paymentHistory('t-more');
  const march = { ...TENANT, interval: 'month', groupBy: 'currency', before: '2026-04-01T00:00:00.000Z' } as const;
  t.deepEqual(await runReport(before, 'volume', march), await runReport(store, 'volume', march));
  const sessions = store.collection<Record<string, unknown> & { _id: string }>('checkout_sessions');
  t.like(await sessions.get('part'), { amountTotal: '300000000', amountReceived: '100000000', amountNet: '100000000' });
  t.like(await sessions.get('over'), { amountTotal: '300000000', amountReceived: '550000000', amountNet: '550000000' });
});

/** Sessions of organization o1 created in March, each with its history, by the checkout sessions projection. */
async function projected(
  histories: [string, CheckoutSessionEvent[], Partial<Parameters<typeof sessionFixture>[0]>?][],
) {
  const { events, append } = createTestLog('2026-03-02T10:00:00.000Z');
  for (const [id, history, fields] of histories) {
    append(
      `checkout_session-${id}`,
      created(sessionFixture({ id, organizationId: 'o1', createdAt: '2026-03-02T10:05:00.000Z', ...fields })),
      'o1',
    );
    for (const event of history) append(`checkout_session-${id}`, event, 'o1');
  }
  const store = createEmbeddedReadStore({});
  for (const event of events) await checkoutSessionsProjection.apply(event, store);
  return store;
}

/** A session of 3.00 USDC plus 0.01 of gas fee on top. */
const withGasFee = { amountGasFee: '1000000', amountTotal: '301000000' };
const MARCH = '2026-03-02T10:05:00.000Z';
const APRIL = '2026-04-03T09:00:00.000Z';

test('volume: each payment carries its share of the gas fee, the first money confirmed paying it, whatever the session became; no period nets below 0', async (t) => {
  const history: [string, CheckoutSessionEvent[], Partial<Parameters<typeof sessionFixture>[0]>?][] = [
    // Part paid in March, completed as is in April: its gas fee was paid in March, with the money.
    [
      'as-is',
      [
        detected('t1', '100000000', MARCH),
        confirmed('t1', MARCH),
        { type: 'CheckoutSessionPartiallyPaid', data: { amountReceived: '100000000', at: MARCH } },
        {
          type: 'CheckoutSessionCompleted',
          data: { amountReceived: '100000000', amountOverpaid: '0', transactionHash: null, partial: true, at: APRIL },
        },
      ],
      withGasFee,
    ],
    // Paid in full (price and gas fee) after it expired.
    [
      'late',
      [
        { type: 'CheckoutSessionExpired', data: { at: MARCH } },
        detected('t2', '301000000', APRIL),
        confirmed('t2', APRIL),
        { type: 'LatePaymentReceived', data: { transferId: 't2', amount: '301000000', at: APRIL } },
      ],
      withGasFee,
    ],
  ];
  const store = await projected(history);
  const rows = await runReport(store, 'volume', { ...TENANT, interval: 'month', groupBy: 'none' });
  t.deepEqual(
    rows.map((row) => [row.period.slice(0, 7), row.payments, row.grossVolume, row.gasFees, row.netVolume]),
    [
      ['2026-03', 1, '100000000', '1000000', '99000000'],
      ['2026-04', 1, '301000000', '1000000', '300000000'],
    ],
  );
});

test('volume: a session paid in two transfers takes its gas fee from the first confirmed, up to its amount, then the next; March keeps its figures when April pays the rest', async (t) => {
  const first: CheckoutSessionEvent[] = [detected('t1', '400000', MARCH), confirmed('t1', MARCH)];
  const rest: CheckoutSessionEvent[] = [detected('t0', '300600000', APRIL), confirmed('t0', APRIL)];
  const params = { ...TENANT, interval: 'month', groupBy: 'none' } as const;
  const rows = await runReport(await projected([['s', [...first, ...rest], withGasFee]]), 'volume', params);
  t.deepEqual(
    rows.map((row) => [row.period.slice(0, 7), row.grossVolume, row.gasFees, row.netVolume]),
    [
      // 0.004 received, all of it gas: nets 0, not below.
      ['2026-03', '400000', '400000', '0'],
      ['2026-04', '300600000', '600000', '300000000'],
    ],
  );
  const marchOnly = await runReport(await projected([['s', first, withGasFee]]), 'volume', params);
  t.deepEqual(marchOnly, rows.slice(0, 1));
  t.regex(REPORTS.volume.about ?? '', /first money confirmed pays them/);
});

test('volume: a payment’s share of the gas fee is of the fee owed when it was confirmed: a switch of asset the next day, raising it, leaves the closed day as it was and is paid by the money after', async (t) => {
  const paidPart: CheckoutSessionEvent[] = [
    detected('t1', '100000000', '2026-03-02T23:50:00.000Z'),
    confirmed('t1', '2026-03-02T23:50:00.000Z'),
  ];
  // The payer switches asset: the gas fee goes from 0.10 to 0.30 (the first deposit is swept too).
  const switched: CheckoutSessionEvent = {
    type: 'PaymentMethodSelected',
    data: { addressId: 'addr-usdc', amountDue: '230000000', amountGasFee: '30000000', at: '2026-03-03T09:00:00.000Z' },
  };
  const rest: CheckoutSessionEvent[] = [
    detected('t2', '230000000', '2026-03-03T10:00:00.000Z'),
    confirmed('t2', '2026-03-03T10:00:00.000Z'),
  ];
  const fields = { amountGasFee: '10000000', amountTotal: '310000000' };
  const params = { ...TENANT, interval: 'day', groupBy: 'none' } as const;
  const figures = async (history: CheckoutSessionEvent[]) =>
    (await runReport(await projected([['s', history, fields]]), 'volume', params)).map((row) => [
      row.period.slice(0, 10),
      row.grossVolume,
      row.gasFees,
      row.netVolume,
    ]);
  const firstDay = ['2026-03-02', '100000000', '10000000', '90000000'];
  t.deepEqual(await figures(paidPart), [firstDay]);
  t.deepEqual(await figures([...paidPart, switched]), [firstDay]);
  t.deepEqual(await figures([...paidPart, switched, ...rest]), [
    firstDay,
    ['2026-03-03', '230000000', '20000000', '210000000'],
  ]);
  t.regex(REPORTS.volume.about ?? '', /moves no closed period/);
});

test('volume: an 18-decimal session paid in two transfers sums their exact amounts once, as amountReceived does (no dust lost to cutting each to 10^-8)', async (t) => {
  const dai = (id: string, raw: string): CheckoutSessionEvent => {
    const payment = daiPaymentFixture(id, raw);
    return {
      type: 'PaymentDetected',
      data: { payment: { ...payment, status: 'pending', detectedAt: MARCH, confirmedAt: null, late: false } },
    };
  };
  const store = await projected([
    [
      'd',
      [dai('a', '1500000005000000000'), confirmed('a', MARCH), dai('b', '1499999995000000000'), confirmed('b', MARCH)],
      { currency: 'dai' },
    ],
  ]);
  const doc = await store.collection<Record<string, unknown> & { _id: string }>('checkout_sessions').get('d');
  t.is(doc?.amountReceived, '300000000');
  for (const groupBy of ['none', 'network'] as const) {
    const [row] = await runReport(store, 'volume', { ...TENANT, interval: 'all', groupBy });
    t.like(row, { payments: 2, grossVolume: '300000000', netVolume: '300000000' });
  }
});

test('refunds: amountRefunded is what a session had received when marked refunded, late money included; money confirmed after the mark is not counted, so March stays as reported', async (t) => {
  const marked = (at: string): CheckoutSessionEvent => ({ type: 'PaymentMarkedRefunded', data: { comment: null, at } });
  const refundedInMarch = '2026-03-20T12:00:00.000Z';
  const paidThenRefunded: [string, CheckoutSessionEvent[], Partial<Parameters<typeof sessionFixture>[0]>?][] = [
    // Paid 3.00 in March, marked refunded in March.
    [
      'paid',
      [
        detected('t-paid', '300000000', MARCH),
        confirmed('t-paid', MARCH),
        {
          type: 'CheckoutSessionCompleted',
          data: { amountReceived: '300000000', amountOverpaid: '0', transactionHash: null, partial: false, at: MARCH },
        },
        marked(refundedInMarch),
      ],
    ],
    // Expired, then 1.00 paid late, then marked refunded: the late money was refunded too.
    [
      'late',
      [
        { type: 'CheckoutSessionExpired', data: { at: MARCH } },
        detected('t-late', '100000000', '2026-03-10T00:00:00.000Z'),
        confirmed('t-late', '2026-03-10T00:00:00.000Z'),
        {
          type: 'LatePaymentReceived',
          data: { transferId: 't-late', amount: '100000000', at: '2026-03-10T00:00:00.000Z' },
        },
        marked(refundedInMarch),
      ],
    ],
  ];
  // April: 0.50 more reaches the first one's address after it was marked refunded.
  const april: CheckoutSessionEvent[] = [
    detected('t-more', '50000000', APRIL),
    confirmed('t-more', APRIL),
    {
      type: 'OverpaymentReceived',
      data: { transferId: 't-more', amount: '50000000', amountOverpaid: '50000000', at: APRIL },
    },
  ];
  const params = { ...TENANT, interval: 'month', groupBy: 'none' } as const;
  const inMarch = await runReport(await projected(paidThenRefunded), 'refunds', params);
  t.deepEqual(
    inMarch.map((row) => [row.period.slice(0, 7), row.currency, row.refundsMarked, row.amountRefunded]),
    [['2026-03', 'usdc', 2, '400000000']],
  );
  const [paid, late] = paidThenRefunded as [(typeof paidThenRefunded)[0], (typeof paidThenRefunded)[0]];
  const later = await projected([[paid[0], [...paid[1], ...april]], late]);
  const sessions = later.collection<Record<string, unknown> & { _id: string }>('checkout_sessions');
  t.like(await sessions.get('paid'), { amountReceived: '350000000' });
  t.deepEqual(await runReport(later, 'refunds', params), inMarch);
  // Volume counts April's 0.50 in April: what was kept is what came after the refund.
  const volume = await runReport(later, 'volume', params);
  t.deepEqual(
    volume.map((row) => [row.period.slice(0, 7), row.grossVolume]),
    [
      ['2026-03', '400000000'],
      ['2026-04', '50000000'],
    ],
  );
  t.regex(REPORTS.refunds.about ?? '', /what they had received when marked/);
});

/** A transfer detected on `network`. */
const on = (network: string, transferId: string, amount: string, at = MARCH): CheckoutSessionEvent => {
  const event = detected(transferId, amount, at);
  if (event.type !== 'PaymentDetected') throw new Error('a detection');
  return { type: 'PaymentDetected', data: { payment: { ...event.data.payment, network } } };
};
const paidInFull = (amountReceived: string, at = MARCH): CheckoutSessionEvent => ({
  type: 'CheckoutSessionCompleted',
  data: { amountReceived, amountOverpaid: '0', transactionHash: null, partial: false, at },
});
const withdrawn = (transferId: string): CheckoutSessionEvent => ({
  type: 'PaymentWithdrawn',
  data: { transferId, reason: 'reorg', at: MARCH },
});

test('refunds by network: the money counted, each payment under its own network, the session under the one that brought most of it; never the network of a payment pending, withdrawn by a reorg or confirmed after the mark', async (t) => {
  const marked: CheckoutSessionEvent = {
    type: 'PaymentMarkedRefunded',
    data: { comment: null, at: '2026-03-20T12:00:00.000Z' },
  };
  const store = await projected([
    // Paid on Tron; then a transfer on another network, withdrawn by a reorg, and one still pending when marked.
    [
      'tron-paid',
      [
        on('tron', 't-tron', '300000000'),
        confirmed('t-tron', MARCH),
        paidInFull('300000000'),
        on('base', 't-gone', '10000000'),
        withdrawn('t-gone'),
        on('arbitrum', 't-pending', '10000000'),
        marked,
        // Confirmed after the mark: kept by the merchant, not refunded (the volume report counts it).
        confirmed('t-pending', APRIL),
      ],
    ],
    // Paid 1.00 on Tron and 2.00 on Base: each part under its network, the session under Base's.
    [
      'split',
      [
        on('tron', 't-part', '100000000'),
        confirmed('t-part', MARCH),
        on('base', 't-rest', '200000000'),
        confirmed('t-rest', MARCH),
        paidInFull('300000000'),
        marked,
      ],
    ],
  ]);
  const rows = await runReport(store, 'refunds', { ...TENANT, interval: 'all', groupBy: 'network' });
  t.deepEqual(
    rows.map((row) => [row.group, row.currency, row.refundsMarked, row.amountRefunded]),
    [
      ['base', 'usdc', 1, '200000000'],
      ['tron', 'usdc', 1, '400000000'],
    ],
  );
  // The same money and sessions as without grouping: split, never counted twice.
  t.deepEqual(
    (await runReport(store, 'refunds', { ...TENANT, interval: 'all', groupBy: 'none' })).map((row) => [
      row.refundsMarked,
      row.amountRefunded,
    ]),
    [[2, '600000000']],
  );
  t.regex(REPORTS.refunds.about ?? '', /by network, each payment/);
});

test('refunds: what a mark covers is told by the order events were recorded in, not timestamps: a payment confirmed after the mark in its millisecond is kept, one confirmed before it on a clock ahead is refunded', async (t) => {
  const markedAt = '2026-03-20T12:00:00.000Z';
  const marked: CheckoutSessionEvent = { type: 'PaymentMarkedRefunded', data: { comment: null, at: markedAt } };
  const store = await projected([
    // Paid 3.00 on Tron, marked; 0.50 on Base confirmed after the mark, in its millisecond.
    [
      'same-ms',
      [
        on('tron', 't-paid', '300000000'),
        confirmed('t-paid', MARCH),
        paidInFull('300000000'),
        on('base', 't-after', '50000000', markedAt),
        marked,
        confirmed('t-after', markedAt),
      ],
    ],
    // Paid 2.00 on Base, confirmed before the mark by an instance whose clock is a second ahead.
    [
      'skewed',
      [
        on('base', 't-skew', '200000000'),
        confirmed('t-skew', '2026-03-20T12:00:01.000Z'),
        paidInFull('200000000'),
        marked,
      ],
    ],
  ]);
  const rows = await runReport(store, 'refunds', { ...TENANT, interval: 'all', groupBy: 'network' });
  t.deepEqual(
    rows.map((row) => [row.group, row.refundsMarked, row.amountRefunded]),
    [
      ['base', 1, '200000000'],
      ['tron', 1, '300000000'],
    ],
  );
  t.deepEqual(
    (await runReport(store, 'refunds', { ...TENANT, interval: 'all', groupBy: 'none' })).map((row) => [
      row.refundsMarked,
      row.amountRefunded,
    ]),
    [[2, '500000000']],
  );
  t.regex(REPORTS.refunds.about ?? '', /not by timestamps/);
});

test('time-to-pay by network: a session counts under the network that brought most of what it had received when completed, never that of a transfer withdrawn by a reorg, still pending or confirmed after completion', async (t) => {
  const paidAt = '2026-03-02T10:07:00.000Z';
  const store = await projected([
    // Paid on Tron in 2 minutes; then 5.00 more on Base (after completion), one withdrawn, one pending.
    [
      'tron-paid',
      [
        on('tron', 't-tron', '300000000', paidAt),
        confirmed('t-tron', paidAt),
        paidInFull('300000000', paidAt),
        on('base', 't-more', '500000000', APRIL),
        confirmed('t-more', APRIL),
        {
          type: 'OverpaymentReceived',
          data: { transferId: 't-more', amount: '500000000', amountOverpaid: '500000000', at: APRIL },
        },
        on('base', 't-gone', '10000000', APRIL),
        withdrawn('t-gone'),
        on('arbitrum', 't-pending', '10000000', APRIL),
      ],
    ],
  ]);
  const rows = await runReport(store, 'time-to-pay', { ...TENANT, interval: 'all', groupBy: 'network' });
  t.deepEqual(
    rows.map((row) => [row.group, row.payments, row.medianSeconds]),
    [['tron', 1, 120]],
  );
  t.regex(REPORTS['time-to-pay'].about ?? '', /by network, each session counts once/);
});

test('payment-issues by network: a session counts under the network that brought most of its confirmed money, never that of a transfer withdrawn by a reorg or still pending; one with nothing confirmed has none', async (t) => {
  const store = await projected([
    // 1.00 of 3.00 on Tron; then a transfer on Base withdrawn by a reorg, and one on Arbitrum pending.
    [
      'short',
      [
        on('tron', 't-part', '100000000'),
        confirmed('t-part', MARCH),
        { type: 'CheckoutSessionPartiallyPaid', data: { amountReceived: '100000000', at: MARCH } },
        on('base', 't-gone', '10000000'),
        withdrawn('t-gone'),
        on('arbitrum', 't-pending', '10000000'),
      ],
    ],
    ['waiting', [on('base', 't-wait', '300000000')]],
  ]);
  const rows = await runReport(store, 'payment-issues', { ...TENANT, interval: 'all', groupBy: 'network' });
  t.deepEqual(
    rows.map((row) => [row.group, row.underpaidSessions, row.latePayments, row.overpaidSessions]),
    [
      [null, 0, 0, 0],
      ['tron', 1, 0, 0],
    ],
  );
  t.regex(REPORTS['payment-issues'].about ?? '', /by network, each session counts once/);
});

test('payment-issues by network: a late payment counts under the network it came on, the session under its main one', async (t) => {
  const store = createEmbeddedReadStore({});
  const sessions = store.collection<Record<string, unknown> & { _id: string }>('checkout_sessions');
  // 2.00 of 3.00 on Tron, completed as is; then 0.50 late on Base and a late one on Base a reorg withdrew.
  await sessions.put(
    completeSession('short', {
      amountTotal: '300000000',
      amountReceived: '250000000',
      amountOverpaid: '0',
      payments: [
        { network: 'tron', amount: '200000000', amountRaw: '200000000' },
        { network: 'base', late: true, amount: '50000000', amountRaw: '50000000' },
        { network: 'base', late: true, status: 'withdrawn', amount: '50000000', amountRaw: '50000000' },
      ],
    }),
  );
  const rows = await runReport(store, 'payment-issues', { ...TENANT, interval: 'all', groupBy: 'network' });
  t.deepEqual(
    rows.map((row) => [row.group, row.underpaidSessions, row.latePayments, row.overpaidSessions]),
    [
      ['base', 0, 1, 0],
      ['tron', 1, 0, 0],
    ],
  );
  const [all] = await runReport(store, 'payment-issues', { ...TENANT, interval: 'all', groupBy: 'none' });
  t.like(all, { underpaidSessions: 1, latePayments: 1, overpaidSessions: 0 });
  t.regex(
    REPORTS['payment-issues'].about ?? '',
    /each late payment counts in latePayments under the network it was paid on/,
  );
});

test('payment-issues: latePayments counts confirmed late payments only, not one a reorg withdrew', async (t) => {
  const store = createEmbeddedReadStore({});
  const sessions = store.collection<Record<string, unknown> & { _id: string }>('checkout_sessions');
  await sessions.put({
    ...completeSession('x', { status: 'expired', completedAt: null, amountTotal: '300000000', amountReceived: '100' }),
    payments: [
      { status: 'confirmed', late: true, confirmedAt: MARCH, amount: '100' },
      { status: 'withdrawn', late: true, confirmedAt: MARCH, amount: '100' },
    ],
  });
  const [row] = await runReport(store, 'payment-issues', { ...TENANT, interval: 'all', groupBy: 'none' });
  t.like(row, { latePayments: 1 });
});

test('payment-issues: underpaid is confirmed money short of the total, whatever the status (completed as is, expired with a late part); paid in full late, still unconfirmed or withdrawn is not', async (t) => {
  const store = await paymentHistory();
  const rows = await runReport(store, 'payment-issues', { ...TENANT, interval: 'all', groupBy: 'none' });
  t.deepEqual(
    rows.map((row) => [row.underpaidSessions, row.latePayments, row.overpaidSessions]),
    [[2, 2, 1]],
  );
  // By session: the part completed as is and the expired one paid 1.00 late.
  const sessions = store.collection<Record<string, unknown> & { _id: string }>('checkout_sessions');
  for (const id of ['part', 'over', 'late-full', 'late-part', 'pending', 'withdrawn']) {
    const doc = (await sessions.get(id))!;
    await sessions.put({ ...doc, paymentLinkId: id });
  }
  const byLink = await runReport(store, 'payment-issues', { ...TENANT, interval: 'all', groupBy: 'paymentLink' });
  t.deepEqual(
    byLink.filter((row) => row.underpaidSessions).map((row) => row.group),
    ['late-part', 'part'],
  );
  t.regex(REPORTS['payment-issues'].about ?? '', /underpaidSessions counts the sessions whose confirmed money/);
});

test('payment-issues: a session that expired or was canceled and received more than its total late is overpaid, as one overpaid after completing is; one short of its gas fee is not', async (t) => {
  const late = (id: string, amount: string, at = APRIL): CheckoutSessionEvent[] => [
    detected(id, amount, at),
    confirmed(id, at),
    { type: 'LatePaymentReceived', data: { transferId: id, amount, at } },
  ];
  const store = await projected([
    // 3.00 asked, it expired; 5.00 came after.
    ['expired-over', [{ type: 'CheckoutSessionExpired', data: { at: MARCH } }, ...late('t1', '500000000')]],
    // Canceled, then 3.005 came: more than the 3.00 price, less than the 3.01 it asked with its gas fee.
    [
      'canceled-short-of-gas',
      [{ type: 'CheckoutSessionCanceled', data: { at: MARCH, reason: null } }, ...late('t2', '300500000')],
      withGasFee,
    ],
  ]);
  const rows = await runReport(store, 'payment-issues', { ...TENANT, interval: 'all', groupBy: 'status' });
  t.deepEqual(
    rows.map((row) => [row.group, row.underpaidSessions, row.latePayments, row.overpaidSessions]),
    [
      ['canceled', 1, 1, 0],
      ['expired', 0, 1, 1],
    ],
  );
  t.regex(
    REPORTS['payment-issues'].about ?? '',
    /overpaidSessions the sessions whose amountReceived is more than their amountTotal/,
  );
});

test('payment-issues by status: groupBy=status, which the API offers, is taken: the short session completed as is, the short one that expired with its late payments', async (t) => {
  const rows = await runReport(await paymentHistory(), 'payment-issues', {
    ...TENANT,
    interval: 'all',
    groupBy: 'status',
  });
  t.deepEqual(
    rows.map((row) => [row.group, row.underpaidSessions, row.latePayments, row.overpaidSessions]),
    [
      ['complete', 1, 0, 1],
      ['expired', 1, 2, 0],
      ['open', 0, 0, 0],
    ],
  );
  t.true(REPORTS['payment-issues'].groups.includes('status'));
});

test('amounts of different currencies are never added: volume (by none, network, paymentLink, product), refunds and subscriptions give a row per currency within each group', async (t) => {
  const store = createEmbeddedReadStore({});
  const sessions = store.collection<Record<string, unknown> & { _id: string }>('checkout_sessions');
  const paid = (id: string, currency: string, amount: string) =>
    completeSession(id, {
      currency,
      amountTotal: amount,
      amountReceived: amount,
      amountFee: '0',
      amountGasFee: '0',
      payments: [{ network: 'base', coveredByRefundMark: true }],
      sweeps: [{ network: 'base', gasCost: '7', at: '2026-03-02T11:00:00Z' }],
      paymentLinkId: 'l1',
      lineItems: { data: [{ amountTotal: amount, price: { productId: 'p1' } }] },
      paymentIntent: { isMarkRefunded: true, markRefundedAt: '2026-03-03T00:00:00Z' },
    });
  for (const doc of [
    paid('a', 'usdc', '100000000'),
    paid('b', 'usdc', '200000000'),
    paid('c', 'eth', '5000000000'),
    paid('d', 'dai', '40000000'),
  ])
    await sessions.put(doc);
  const params = { ...TENANT, interval: 'all', from: '2026-03-01T00:00:00.000Z' } as const;
  const byCurrency = [
    ['dai', 1, '40000000'],
    ['eth', 1, '5000000000'],
    ['usdc', 2, '300000000'],
  ];
  for (const [groupBy, group] of [
    ['none', null],
    ['network', 'base'],
    ['paymentLink', 'l1'],
    ['product', 'p1'],
  ] as const) {
    const rows = await runReport(store, 'volume', { ...params, groupBy });
    t.deepEqual(
      rows.map((row) => [row.currency, row.payments, row.grossVolume]),
      byCurrency,
      `volume by ${groupBy}`,
    );
    t.true(
      rows.every((row) => row.group === group),
      `volume by ${groupBy}`,
    );
  }
  // Each currency's sessions' share of the sweeps' gas, in the network's coin.
  t.deepEqual(
    (await runReport(store, 'volume', { ...params, groupBy: 'network' })).map((row) => row.operatorSweepGas),
    ['7', '7', '14'],
  );
  t.deepEqual(
    (await runReport(store, 'refunds', { ...params, groupBy: 'none' })).map((row) => [
      row.currency,
      row.refundsMarked,
      row.amountRefunded,
    ]),
    [
      ['dai', 1, '40000000'],
      ['eth', 1, '5000000000'],
      ['usdc', 2, '300000000'],
    ],
  );

  const subscriptions = store.collection<Record<string, unknown> & { _id: string }>('subscriptions');
  for (const doc of [
    subscription('usdc-1', { createdAt: '2026-03-05T00:00:00Z' }),
    subscription('usdc-2', { createdAt: '2026-03-06T00:00:00Z' }),
    subscription('dai-1', { createdAt: '2026-03-07T00:00:00Z', currency: 'dai', amountTotal: '700000000' }),
  ])
    await subscriptions.put(doc);
  const monthly = await runReport(store, 'subscriptions', { ...TENANT, interval: 'month', groupBy: 'none' });
  t.deepEqual(
    monthly.map((row) => [row.period, row.group, row.currency, row.activeAtEnd, row.mrr]),
    [
      ['2026-03-01T00:00:00.000Z', null, 'dai', 1, '700000000'],
      ['2026-03-01T00:00:00.000Z', null, 'usdc', 2, '2000000000'],
    ],
  );
});

test('subscriptions: one paused at a period’s end is not active then and brings no MRR; resumed, it counts again from the period it resumed in', async (t) => {
  const store = createEmbeddedReadStore({});
  const subscriptions = store.collection<Record<string, unknown> & { _id: string }>('subscriptions');
  for (const doc of [
    subscription('steady', { createdAt: '2026-01-05T00:00:00Z' }),
    // Paused in February, resumed in April: inactive at the end of February and March.
    subscription('break', {
      createdAt: '2026-01-06T00:00:00Z',
      amountTotal: '300000000',
      pauses: [{ pausedAt: '2026-02-10T00:00:00Z', resumedAt: '2026-04-02T00:00:00Z' }],
    }),
    // Paused and resumed within January, then paused again in March and still paused.
    subscription('paused', {
      createdAt: '2026-01-07T00:00:00Z',
      status: 'paused',
      amountTotal: '50000000',
      pausedAt: '2026-03-03T00:00:00Z',
      pauses: [
        { pausedAt: '2026-01-10T00:00:00Z', resumedAt: '2026-01-20T00:00:00Z' },
        { pausedAt: '2026-03-03T00:00:00Z', resumedAt: null },
      ],
    }),
    subscription('april', { createdAt: '2026-04-01T00:00:00Z', amountTotal: '7' }),
  ])
    await subscriptions.put(doc);
  const rows = await runReport(store, 'subscriptions', { ...TENANT, interval: 'month', groupBy: 'none' });
  t.deepEqual(
    rows.map((row) => [row.period.slice(0, 7), row.activeAtEnd, row.mrr]),
    [
      ['2026-01', 3, '1350000000'],
      ['2026-02', 2, '1050000000'],
      ['2026-03', 1, '1000000000'],
      ['2026-04', 3, '1300000007'],
    ],
  );
  t.regex(REPORTS.subscriptions.about ?? '', /paused/);
});

test('subscriptions: a range starting mid-period shows that period, as the other reports do (a subscription started within the range is counted), by month, week and day', async (t) => {
  const store = createEmbeddedReadStore({});
  const subscriptions = store.collection<Record<string, unknown> & { _id: string }>('subscriptions');
  // Friday 20 March 2026, 12:00 UTC.
  await subscriptions.put(subscription('mid-march', { createdAt: '2026-03-20T12:00:00.000Z' }));
  const run = async (interval: ReportParams['interval'], from: string) => {
    const params: ReportParams = { ...TENANT, interval, groupBy: 'none', from, to: '2026-03-31T23:59:59.999Z' };
    const rows = REPORTS.subscriptions.rows(
      await subscriptions.aggregate(REPORTS.subscriptions.pipeline(params)),
      params,
    );
    return rows.map((row) => [row.period, row.newSubscriptions, row.mrr]);
  };
  t.deepEqual(await run('month', '2026-03-15T00:00:00.000Z'), [['2026-03-01T00:00:00.000Z', 1, '1000000000']]);
  // Then each period up to `to` with the subscription active in it, nothing new there.
  t.deepEqual(await run('week', '2026-03-18T00:00:00.000Z'), [
    ['2026-03-16T00:00:00.000Z', 1, '1000000000'],
    ['2026-03-23T00:00:00.000Z', 0, '1000000000'],
    ['2026-03-30T00:00:00.000Z', 0, '1000000000'],
  ]);
  const days = await run('day', '2026-03-20T06:00:00.000Z');
  t.deepEqual(days[0], ['2026-03-20T00:00:00.000Z', 1, '1000000000']);
  t.deepEqual(days.at(-1), ['2026-03-31T00:00:00.000Z', 0, '1000000000']);
  t.is(days.length, 12);
  // A range after the period holds no row of it.
  t.deepEqual(await run('month', '2026-04-01T00:00:00.000Z'), []);
});

test('subscriptions: a range before a midnight (a date-only `to`) holds that day and not the next', async (t) => {
  const store = createEmbeddedReadStore({});
  const subscriptions = store.collection<Record<string, unknown> & { _id: string }>('subscriptions');
  await subscriptions.put(subscription('last-of-march', { createdAt: '2026-03-31T18:00:00.000Z' }));
  await subscriptions.put(subscription('first-of-april', { createdAt: '2026-04-01T00:00:00.000Z' }));
  const params: ReportParams = { ...TENANT, interval: 'day', groupBy: 'none', before: '2026-04-01T00:00:00.000Z' };
  const rows = REPORTS.subscriptions.rows(
    await subscriptions.aggregate(REPORTS.subscriptions.pipeline(params)),
    params,
  );
  t.deepEqual(
    rows.map((row) => [row.period, row.newSubscriptions]),
    [['2026-03-31T00:00:00.000Z', 1]],
  );
});

test('a report past its row limit is a 400 naming the limit, not an unbounded answer: day by day, and the subscriptions cohorts rolled up into rows', async (t) => {
  const store = createEmbeddedReadStore({});
  const sessions = store.collection<Record<string, unknown> & { _id: string }>('checkout_sessions');
  const subscriptions = store.collection<Record<string, unknown> & { _id: string }>('subscriptions');
  for (const day of ['02', '03', '04']) {
    await sessions.put(
      completeSession(day, {
        amountReceived: '100',
        amountFee: '0',
        amountGasFee: '0',
        paymentLinkId: null,
        completedAt: `2026-03-${day}T10:05:00Z`,
      }),
    );
    await subscriptions.put(subscription(day, { createdAt: `2026-03-${day}T10:00:00.000Z` }));
  }
  const params: ReportParams = { ...TENANT, interval: 'day', groupBy: 'none' };
  for (const name of ['volume', 'subscriptions'] as const) {
    t.is((await runReport(store, name, params, { maxRows: 3 })).length, 3, name);
    const error = await t.throwsAsync(runReport(store, name, params, { maxRows: 2 }), { instanceOf: ValidationError });
    t.like(error, { statusCode: 400, code: 'report_too_large' });
    t.regex(error?.message ?? '', new RegExp(`the ${name} report has more than 2 rows.*longer interval`));
    // By month it is one row.
    t.is((await runReport(store, name, { ...params, interval: 'month' }, { maxRows: 2 })).length, 1);
  }
});

test('reports by the days of a time zone: across New York’s change to daylight saving (a 23-hour 8 March) each payment counts on its local day, and a range from a local date starts at that midnight there', async (t) => {
  const store = createEmbeddedReadStore({});
  const sessions = store.collection<Record<string, unknown> & { _id: string }>('checkout_sessions');
  for (const [id, completedAt, amountReceived] of [
    // 23:30 on Saturday 7 March in New York (EST), 8 March in UTC.
    ['sat', '2026-03-08T04:30:00Z', '100000000'],
    // 01:30 EST, then 03:30 EDT on Sunday 8 March: the clocks skipped 02:00 to 03:00 between them.
    ['sun-early', '2026-03-08T06:30:00Z', '200000000'],
    ['sun-after', '2026-03-08T07:30:00Z', '300000000'],
    // 23:30 EDT on Sunday 8 March, 9 March in UTC: still the 23-hour Sunday there.
    ['sun-late', '2026-03-09T03:30:00Z', '400000000'],
    // 00:30 EDT on Monday 9 March.
    ['mon', '2026-03-09T04:30:00Z', '500000000'],
  ] as const)
    await sessions.put(
      completeSession(id, { completedAt, createdAt: completedAt, amountReceived, paymentLinkId: null }),
    );
  const byDay = async (timeZone: string | undefined, from?: string) =>
    (await runReport(store, 'volume', { ...TENANT, interval: 'day', groupBy: 'none', timeZone, from })).map((row) => [
      row.period,
      row.payments,
      row.grossVolume,
    ]);
  t.deepEqual(await byDay('America/New_York'), [
    ['2026-03-07T05:00:00.000Z', 1, '100000000'],
    ['2026-03-08T05:00:00.000Z', 3, '900000000'],
    ['2026-03-09T04:00:00.000Z', 1, '500000000'],
  ]);
  t.deepEqual(await byDay(undefined), [
    ['2026-03-08T00:00:00.000Z', 3, '600000000'],
    ['2026-03-09T00:00:00.000Z', 2, '900000000'],
  ]);
  // The API reads `from=2026-03-08` in the zone as its midnight there (05:00 UTC).
  t.deepEqual((await byDay('America/New_York', '2026-03-08T05:00:00.000Z')).length, 2);
  const [week] = await runReport(store, 'volume', {
    ...TENANT,
    interval: 'week',
    groupBy: 'none',
    timeZone: 'America/New_York',
    from: '2026-03-08T05:00:00.000Z',
  });
  // Sunday 8 March is in the week from Monday 2 March there; Monday 9 March starts the next.
  t.like(week, { period: '2026-03-02T05:00:00.000Z', payments: 3, grossVolume: '900000000' });
});

test('reports by ISO week in a time zone: 31 December 2026 and 1 January 2027 are one week (2026-W53), 30 December 2024 starts 2025-W01, and a week turns at Monday’s midnight there, not UTC’s', async (t) => {
  const byWeek = async (timeZone: string, completed: string[]) => {
    const store = createEmbeddedReadStore({});
    const sessions = store.collection<Record<string, unknown> & { _id: string }>('checkout_sessions');
    for (const completedAt of completed)
      await sessions.put(
        completeSession(completedAt, {
          completedAt,
          createdAt: completedAt,
          amountReceived: '100000000',
          paymentLinkId: null,
        }),
      );
    const rows = await runReport(store, 'volume', { ...TENANT, interval: 'week', groupBy: 'none', timeZone });
    return withLocalDates(rows, timeZone).map((row) => [row.localDate, row.period, row.payments]);
  };
  t.deepEqual(
    await byWeek('America/New_York', [
      // Tuesday 2 January 2024, in 2024-W01.
      '2024-01-02T17:00:00Z',
      // Monday 30 December 2024: 2025-W01, not the first week of 2024.
      '2024-12-30T17:00:00Z',
      // Noon on Thursday 31 December 2026 and on Friday 1 January 2027: both 2026-W53.
      '2026-12-31T17:00:00Z',
      '2027-01-01T17:00:00Z',
    ]),
    [
      ['2024-01-01', '2024-01-01T05:00:00.000Z', 1],
      ['2024-12-30', '2024-12-30T05:00:00.000Z', 1],
      ['2026-12-28', '2026-12-28T05:00:00.000Z', 2],
    ],
  );
  t.deepEqual(
    await byWeek('Asia/Tokyo', [
      // 00:30 on Monday 30 December 2024 there (still the 29th in UTC): 2025-W01.
      '2024-12-29T15:30:00Z',
      // 01:00 on 31 December 2026 and 05:00 on 1 January 2027 there (31 December in UTC): 2026-W53.
      '2026-12-30T16:00:00Z',
      '2026-12-31T20:00:00Z',
    ]),
    [
      ['2024-12-30', '2024-12-29T15:00:00.000Z', 1],
      ['2026-12-28', '2026-12-27T15:00:00.000Z', 2],
    ],
  );
  // 14 hours ahead of UTC, late Sunday 2 and early Monday 3 January 2028 there (both Sunday in UTC): 2027-W52, then 2028-W01.
  t.deepEqual(await byWeek('Pacific/Kiritimati', ['2028-01-02T09:30:00Z', '2028-01-02T10:30:00Z']), [
    ['2027-12-27', '2027-12-26T10:00:00.000Z', 1],
    ['2028-01-03', '2028-01-02T10:00:00.000Z', 1],
  ]);
  // 11 hours behind UTC, late Sunday 3 and early Monday 4 January 2027 there (both Monday in UTC): 2026-W53, then 2027-W01.
  t.deepEqual(await byWeek('Pacific/Pago_Pago', ['2027-01-04T10:30:00Z', '2027-01-04T11:30:00Z']), [
    ['2026-12-28', '2026-12-28T11:00:00.000Z', 1],
    ['2027-01-04', '2027-01-04T11:00:00.000Z', 1],
  ]);
});

test('subscriptions by month in a time zone: one started at 23:30 on 31 March in New York (April in UTC) is March’s there', async (t) => {
  const store = createEmbeddedReadStore({});
  const subscriptions = store.collection<Record<string, unknown> & { _id: string }>('subscriptions');
  await subscriptions.put(subscription('late-march', { createdAt: '2026-04-01T03:30:00Z' }));
  const params = (timeZone?: string): ReportParams => ({
    ...TENANT,
    interval: 'month',
    groupBy: 'none',
    timeZone,
    from: '2026-03-01T05:00:00.000Z',
  });
  const [there] = await runReport(store, 'subscriptions', params('America/New_York'));
  t.like(there, { period: '2026-03-01T05:00:00.000Z', newSubscriptions: 1, activeAtEnd: 1 });
  const [utc] = await runReport(store, 'subscriptions', params());
  t.like(utc, { period: '2026-04-01T00:00:00.000Z', newSubscriptions: 1 });
});

test('subscriptions: a period with no subscription begun, ended or paused still has its row while subscriptions are active, up to to or now, so MRR has no gap; a currency with none alive then has none', async (t) => {
  const store = createEmbeddedReadStore({});
  const subscriptions = store.collection<Record<string, unknown> & { _id: string }>('subscriptions');
  for (const doc of [
    subscription('a', { createdAt: '2026-01-05T00:00:00Z' }),
    subscription('b', {
      createdAt: '2026-01-06T00:00:00Z',
      amountTotal: '500000000',
      status: 'canceled',
      endedAt: '2026-04-02T00:00:00Z',
    }),
    subscription('dai', {
      createdAt: '2026-01-07T00:00:00Z',
      currency: 'dai',
      status: 'canceled',
      endedAt: '2026-02-01T00:00:00Z',
    }),
  ])
    await subscriptions.put(doc);
  const month = { ...TENANT, interval: 'month', groupBy: 'none' } as const;
  const rows = async (params: Partial<ReportParams>) =>
    (await runReport(store, 'subscriptions', { ...month, ...params })).map((r) => [
      r.period.slice(0, 7),
      r.currency,
      r.newSubscriptions,
      r.churned,
      r.activeAtEnd,
      r.mrr,
    ]);
  // February and March: nothing begun or ended, 15.00 a month all the same; May, up to now, 10.00.
  t.deepEqual(await rows({ now: '2026-05-20T00:00:00.000Z' }), [
    ['2026-01', 'dai', 1, 0, 1, '1000000000'],
    ['2026-01', 'usdc', 2, 0, 2, '1500000000'],
    ['2026-02', 'dai', 0, 1, 0, '0'],
    ['2026-02', 'usdc', 0, 0, 2, '1500000000'],
    ['2026-03', 'usdc', 0, 0, 2, '1500000000'],
    ['2026-04', 'usdc', 0, 1, 1, '1000000000'],
    ['2026-05', 'usdc', 0, 0, 1, '1000000000'],
  ]);
  // The MRR of March alone is asked: it is there, not an empty answer.
  t.deepEqual(await rows({ from: '2026-03-01T00:00:00.000Z', to: '2026-03-31T23:59:59.999Z' }), [
    ['2026-03', 'usdc', 0, 0, 2, '1500000000'],
  ]);
  // Never past now, whatever to says.
  t.is(
    (
      await runReport(store, 'subscriptions', {
        ...month,
        to: '2099-12-31T00:00:00.000Z',
        now: '2026-06-01T00:00:00.000Z',
      })
    ).at(-1)?.period,
    '2026-06-01T00:00:00.000Z',
  );
  // By day in a zone: each day of a quiet week, at its midnight there.
  const days = await runReport(store, 'subscriptions', {
    ...TENANT,
    interval: 'day',
    groupBy: 'none',
    timeZone: 'America/New_York',
    from: '2026-03-07T05:00:00.000Z',
    before: '2026-03-10T04:00:00.000Z',
  });
  t.deepEqual(
    days.map((r) => [r.period, r.mrr]),
    [
      ['2026-03-07T05:00:00.000Z', '1500000000'],
      ['2026-03-08T05:00:00.000Z', '1500000000'],
      ['2026-03-09T04:00:00.000Z', '1500000000'],
    ],
  );
});

test('conversion: the rate is rounded half up exactly, whatever the double nearest the quotient is (3 of 160 is 0.0188, as 1 of 32 is 0.0313)', async (t) => {
  const store = createEmbeddedReadStore({});
  const sessions = store.collection<Record<string, unknown> & { _id: string }>('checkout_sessions');
  const made = async (currency: string, created: number, completed: number) => {
    for (let i = 0; i < created; i++)
      await sessions.put({
        ...completeSession(`${currency}-${i}`, { currency }),
        ...(i < completed ? {} : { status: 'expired', completedAt: null }),
      });
  };
  await made('a', 160, 3);
  await made('b', 32, 1);
  await made('c', 3, 2);
  await made('d', 7, 7);
  const rows = await runReport(store, 'conversion', { ...TENANT, interval: 'month', groupBy: 'currency' });
  t.deepEqual(
    rows.map((r) => [r.group, r.created, r.completed, r.conversionRate]),
    [
      ['a', 160, 3, '0.0188'],
      ['b', 32, 1, '0.0313'],
      ['c', 3, 2, '0.6667'],
      ['d', 7, 7, '1.0000'],
    ],
  );
});

test("the README's table of reports and the reports agree: each one's columns, the time it counts by (dateField) and its groupBy", async (t) => {
  const rows = tableRows(readmeSection('### Reports and analytics'), (line) => /^\| `[a-z-]+` /.test(line));
  t.deepEqual(rows.map(([, name]) => name!.replaceAll('`', '')).sort(), Object.keys(REPORTS).sort());
  const codes = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
  for (const [, nameCell, columnsCell, timeCell, groupsCell] of rows) {
    const name = nameCell!.replaceAll('`', '') as ReportName;
    const report = REPORTS[name];
    t.deepEqual(
      ['period', 'localDate', 'group', ...codes(columnsCell!.replace(/\(.*?\)/g, ''))],
      reportColumns(report),
      `${name}'s columns`,
    );
    t.is(codes(timeCell!)[0], reportTime(name, 'none'), `${name}'s dateField`);
    t.deepEqual(
      codes(groupsCell!.replace(/\(.*?\)/g, '')),
      report.groups.filter((g) => g !== 'none'),
      `${name}'s groupBy`,
    );
  }
});
