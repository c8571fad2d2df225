import { randomBytes } from 'node:crypto';
import test from 'ava';
import { MongoClient } from 'mongodb';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import { createMongoReadStore } from '../read-store/mongodb-read-store.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import { GROUPS, INTERVALS, REPORT_NAMES, REPORTS, type ReportParams, type ReportRow } from './report-pipelines.ts';

/**
 * Every report, at every interval and grouping it takes, over one known set of read documents: the
 * same rows on the embedded store and, when MONGODB_URL is set, on MongoDB (the pipelines are
 * MongoDB's; the embedded store runs them with mingo).
 */

const TENANT = { organizationId: 'o1', environment: 'test' as const };
type Doc = Record<string, unknown> & { _id: string };

/**
 * A session as the read model holds it: its payments confirmed (for amountReceived), the first paying
 * its gas fee as far as its amount goes, and its sweeps made at its completion, unless given.
 */
const session = (id: string, fields: Record<string, unknown>): Doc => {
  const doc: Doc = {
    _id: id,
    ...TENANT,
    status: 'complete',
    currency: 'usdc',
    createdAt: '2026-03-02T10:00:00.000Z',
    completedAt: '2026-03-02T10:05:00.000Z',
    amountTotal: '300000000',
    amountFee: '0',
    amountGasFee: '1000',
    amountReceived: '300000000',
    amountOverpaid: '0',
    paymentLinkId: null,
    payments: [{ network: 'base', late: false }],
    sweeps: [{ network: 'base', gasCost: '9007199254740993' }],
    lineItems: { data: [{ amountTotal: '300000000', price: { productId: 'p1' } }] },
    paymentIntent: { isMarkRefunded: false, markRefundedAt: null },
    ...fields,
  };
  const at = doc.completedAt ?? doc.createdAt;
  const [received, gasFee] = [BigInt(String(doc.amountReceived)), BigInt(String(doc.amountGasFee))];
  const gasShare = received < gasFee ? received : gasFee;
  return {
    ...doc,
    payments: (doc.payments as Record<string, unknown>[]).map((p, i) => ({
      status: 'confirmed',
      confirmedAt: at,
      amount: doc.amountReceived,
      amountRaw: doc.amountReceived,
      asset: { decimals: 8 },
      feeShare: { fee: '0', gasFee: i === 0 ? String(gasShare) : '0' },
      ...p,
    })),
    sweeps: (doc.sweeps as Record<string, unknown>[]).map((sweep) => ({ at, ...sweep })),
  };
};

const DOCS: Record<string, Doc[]> = {
  checkout_sessions: [
    session('a', {}),
    session('b', {
      currency: 'eth',
      amountTotal: '123456789012345678',
      amountReceived: '123456789012345678',
      completedAt: '2026-03-09T08:00:00.000Z',
      paymentLinkId: 'l1',
      payments: [{ network: 'ethereum', late: true }],
      sweeps: [],
      lineItems: {
        data: [
          { amountTotal: '100000000000000000', price: { productId: 'p1' } },
          { amountTotal: '23456789012345678', price: { productId: 'p2' } },
        ],
      },
    }),
    session('c', { status: 'open', completedAt: null, payments: [], sweeps: [] }),
    session('d', {
      status: 'expired',
      completedAt: null,
      createdAt: '2026-04-01T00:00:00.000Z',
      amountReceived: '100',
      payments: [{ network: 'base', late: false }],
    }),
    session('e', {
      createdAt: '2026-04-02T00:00:00.000Z',
      completedAt: '2026-04-02T01:00:00.000Z',
      amountReceived: '300000005',
      amountOverpaid: '5',
      payments: [{ network: 'base', late: false, coveredByRefundMark: true }],
      paymentIntent: { isMarkRefunded: true, markRefundedAt: '2026-04-03T00:00:00.000Z' },
    }),
    { ...session('foreign', {}), organizationId: 'o2' },
    // The session that paid invoice i1 sells one line of its own product; by product, the invoice's lines count.
    session('inv', {
      invoiceId: 'i1',
      completedAt: '2026-03-20T00:00:00.000Z',
      amountGasFee: '0',
      sweeps: [],
      amountTotal: '500000000',
      amountReceived: '500000000',
      lineItems: { data: [{ amountTotal: '500000000', price: { productId: 'invoice-product' } }] },
    }),
  ],
  invoices: [
    {
      _id: 'i1',
      ...TENANT,
      status: 'paid',
      checkoutSessionId: 'inv',
      lineItems: {
        data: [
          { priceId: 'price-p1', amountTotal: '400000000' },
          { priceId: null, amountTotal: '100000000' },
        ],
      },
    },
  ],
  prices: [{ _id: 'price-p1', ...TENANT, productId: 'p1' }],
  subscriptions: [
    {
      _id: 's1',
      ...TENANT,
      status: 'active',
      currency: 'usdc',
      interval: 'month',
      intervalCount: 1,
      amountTotal: '1000000000',
      createdAt: '2026-01-05T00:00:00.000Z',
      startedAt: '2026-01-05T00:00:00.000Z',
      endedAt: null,
      pastDueSince: null,
    },
    {
      _id: 's2',
      ...TENANT,
      status: 'canceled',
      currency: 'usdc',
      interval: 'year',
      intervalCount: 1,
      amountTotal: '12000000000',
      createdAt: '2026-02-05T00:00:00.000Z',
      startedAt: '2026-02-05T00:00:00.000Z',
      endedAt: '2026-03-05T00:00:00.000Z',
      pastDueSince: null,
    },
    {
      _id: 's3',
      ...TENANT,
      status: 'paused',
      currency: 'dai',
      interval: 'month',
      intervalCount: 1,
      amountTotal: '500000000',
      createdAt: '2026-01-10T00:00:00.000Z',
      startedAt: '2026-01-10T00:00:00.000Z',
      endedAt: null,
      pastDueSince: null,
      pausedAt: '2026-03-20T00:00:00.000Z',
      pauses: [
        { pausedAt: '2026-01-12T00:00:00.000Z', resumedAt: '2026-02-01T00:00:00.000Z' },
        { pausedAt: '2026-03-20T00:00:00.000Z', resumedAt: null },
      ],
    },
  ],
};

async function rowsOn(store: ReadStore): Promise<Record<string, ReportRow[]>> {
  for (const [collection, docs] of Object.entries(DOCS))
    for (const doc of docs) await store.collection<Doc>(collection).put(doc);
  const out: Record<string, ReportRow[]> = {};
  for (const name of REPORT_NAMES)
    for (const interval of INTERVALS)
      for (const groupBy of GROUPS.filter((g) => REPORTS[name].groups.includes(g))) {
        const params: ReportParams = { ...TENANT, interval, groupBy };
        const report = REPORTS[name];
        out[`${name} ${interval} ${groupBy}`] = report.rows(
          await store.collection(report.collection).aggregate(report.pipeline(params)),
          params,
        );
      }
  return out;
}

test('every report at every interval and grouping runs on the embedded store, the foreign tenant in none', async (t) => {
  const rows = await rowsOn(createEmbeddedReadStore({}));
  for (const [key, list] of Object.entries(rows)) t.true(list.length > 0, `${key} has rows`);
  t.like(
    rows['volume month product']?.find((r) => r.group === 'p2'),
    { grossVolume: '23456789012345678' },
  );
  // The invoice's lines, not the product its session was named for: p1's price, and a line with no price.
  t.deepEqual(
    rows['volume month product']?.map((r) => [r.period, r.group, r.currency, r.payments, r.grossVolume]),
    [
      ['2026-03-01T00:00:00.000Z', null, 'usdc', 1, '100000000'],
      ['2026-03-01T00:00:00.000Z', 'p1', 'eth', 1, '100000000000000000'],
      ['2026-03-01T00:00:00.000Z', 'p1', 'usdc', 2, '700000000'],
      ['2026-03-01T00:00:00.000Z', 'p2', 'eth', 1, '23456789012345678'],
      ['2026-04-01T00:00:00.000Z', 'p1', 'usdc', 1, '300000000'],
    ],
  );
  t.deepEqual(
    rows['volume month network']?.map((r) => [r.period, r.group, r.currency, r.operatorSweepGas]),
    [
      ['2026-03-01T00:00:00.000Z', 'base', 'usdc', '9007199254740993'],
      ['2026-03-01T00:00:00.000Z', 'ethereum', 'eth', '0'],
      // The expired session's late deposit was swept too: the operator paid that gas.
      ['2026-04-01T00:00:00.000Z', 'base', 'usdc', '18014398509481986'],
    ],
  );
  // ETH and USDC never add up: a row per currency.
  t.deepEqual(
    rows['volume month none']?.map((r) => [r.period, r.currency, r.payments, r.grossVolume, r.lateVolume, r.gasFees]),
    [
      ['2026-03-01T00:00:00.000Z', 'eth', 1, '123456789012345678', '123456789012345678', '1000'],
      ['2026-03-01T00:00:00.000Z', 'usdc', 2, '800000000', '0', '1000'],
      // The expired session's 0.000001 counts as received, when it was confirmed, and pays its gas
      // fee as far as it goes (100 of 1000): a payment never nets below 0.
      ['2026-04-01T00:00:00.000Z', 'usdc', 2, '300000105', '0', '1100'],
    ],
  );
  // The DAI subscription is paused at the end of January and of March: no MRR then.
  t.deepEqual(
    rows['subscriptions month none']?.map((r) => [r.period, r.currency, r.activeAtEnd, r.mrr]),
    [
      ['2026-01-01T00:00:00.000Z', 'dai', 0, '0'],
      ['2026-01-01T00:00:00.000Z', 'usdc', 1, '1000000000'],
      ['2026-02-01T00:00:00.000Z', 'dai', 1, '500000000'],
      ['2026-02-01T00:00:00.000Z', 'usdc', 2, '2000000000'],
      ['2026-03-01T00:00:00.000Z', 'dai', 0, '0'],
      ['2026-03-01T00:00:00.000Z', 'usdc', 1, '1000000000'],
    ],
  );
});

const mongoDbUrl = process.env['MONGODB_URL'];
if (mongoDbUrl) {
  test('MongoDB answers every report as the embedded store does', async (t) => {
    const databaseName = `weir_reports_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
    const mongo = await createMongoReadStore({ url: mongoDbUrl, databaseName });
    t.teardown(async () => {
      await mongo.close();
      const client = new MongoClient(mongoDbUrl);
      await client.db(databaseName).dropDatabase();
      await client.close();
    });
    t.deepEqual(await rowsOn(mongo), await rowsOn(createEmbeddedReadStore({})));
  });
}
