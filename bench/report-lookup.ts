/**
 * The volume report by product (`GET /api/v1/reports/volume?groupBy=product`, its two `$lookup`s from
 * invoices and prices) on an embedded read store holding other tenants' invoices, prices and sessions
 * beside the asked tenant's few. Timed as the route runs it (`runReport`) against the same pipeline
 * run as the store ran it before (mingo's `$lookup` over a clone of the whole foreign collection),
 * alternating, in one process; the two must answer the same rows.
 *
 *   node --import tsx bench/report-lookup.ts [--others 20000] [--mine 200] [--rounds 7] [--json FILE]
 */
import { writeFile } from 'node:fs/promises';
import { Aggregator, ProcessingMode } from 'mingo';
import { INDEXED_FIELDS } from '../src/projections/all-projections.ts';
import { PRICES } from '../src/projections/catalog.projection.ts';
import { INVOICES } from '../src/projections/invoices.projection.ts';
import { createEmbeddedReadStore } from '../src/read-store/embedded-read-store.ts';
import type { ReadDocument } from '../src/read-store/read-store.ts';
import { REPORTS, type ReportParams, runReport } from '../src/reports/report-pipelines.ts';
import { loadAverage1m, machineInfo } from './evm/support/bench-env.ts';
import { cliArgs } from './support/cli-args.ts';

const SESSIONS = 'checkout_sessions';
const ORGS = 50;

/** A tenant's invoice, the session that paid it, and a session of its own line items; `bulk` stands for the rest of a real document. */
function tenantDocuments(org: string, count: number, prices: number): Record<string, ReadDocument[]> {
  const tenant = { organizationId: org, environment: 'test' };
  const bulk = { customer: { email: `buyer@${org}.example`, name: 'A Buyer' }, metadata: { note: 'x'.repeat(200) } };
  const docs: Record<string, ReadDocument[]> = { [INVOICES]: [], [PRICES]: [], [SESSIONS]: [] };
  for (let p = 0; p < prices; p++)
    docs[PRICES]!.push({ _id: `price_${org}_${p}`, ...tenant, productId: `prod_${org}_${p % 5}`, unitAmount: '100' });
  for (let i = 0; i < count; i++) {
    const at = new Date(Date.UTC(2026, 10, 1 + (i % 28), 12)).toISOString();
    const lines = [0, 1].map((k) => ({
      priceId: `price_${org}_${(i + k) % prices}`,
      amountTotal: `${100 + k}00000000`,
    }));
    docs[INVOICES]!.push({
      _id: `inv_${org}_${i}`,
      ...tenant,
      status: 'paid',
      checkoutSessionId: `cs_${org}_inv_${i}`,
      lineItems: { data: lines },
      ...bulk,
    });
    const session = { ...tenant, status: 'complete', completedAt: at, currency: 'USD', ...bulk };
    const ownLine = { amountTotal: '25000000', price: { productId: `prod_${org}_${i % 5}` } };
    docs[SESSIONS]!.push(
      { _id: `cs_${org}_inv_${i}`, ...session, invoiceId: `inv_${org}_${i}`, lineItems: { data: [ownLine] } },
      { _id: `cs_${org}_${i}`, ...session, lineItems: { data: [ownLine] } },
    );
  }
  return docs;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const args = cliArgs(process.argv.slice(2));
  const others = args.integer('--others', 20_000, 1_000_000);
  const mine = args.integer('--mine', 200, 100_000);
  const rounds = args.integer('--rounds', 7, 100);
  const store = createEmbeddedReadStore({ indexedFields: INDEXED_FIELDS, writes: 'trusted' });
  const all: Record<string, ReadDocument[]> = { [INVOICES]: [], [PRICES]: [], [SESSIONS]: [] };
  const tenants = [
    tenantDocuments('org_asked', mine, 20),
    ...Array.from({ length: ORGS }, (_, o) => tenantDocuments(`org_${o}`, Math.ceil(others / ORGS), 40)),
  ];
  for (const docs of tenants)
    for (const [name, list] of Object.entries(docs))
      for (const doc of list) {
        await store.collection(name).put(doc);
        all[name]!.push(doc);
      }

  const params: ReportParams = {
    organizationId: 'org_asked',
    environment: 'test',
    interval: 'month',
    groupBy: 'product',
  };
  const report = REPORTS.volume;
  // As the store ran it before: the tenant's sessions by the leading `$match`, then mingo's own
  // `$lookup`, given a clone of every document of the foreign collection, all tenants, per stage.
  const [first, ...stages]: Record<string, unknown>[] = [...report.pipeline(params), { $limit: 1001 }];
  const before = async () => {
    const sessions = await store.collection(SESSIONS).find(first!['$match'] as Record<string, unknown>);
    const options = {
      processingMode: ProcessingMode.CLONE_INPUT,
      collectionResolver: (name: string) => (all[name] ?? []).map((doc) => structuredClone(doc)),
    };
    return report.rows(new Aggregator(stages, options).run(sessions), params);
  };
  const after = () => runReport(store, 'volume', params);

  const expected = JSON.stringify(await before());
  if (JSON.stringify(await after()) !== expected) throw new Error('the two answer different rows');
  const times = { before: [] as number[], after: [] as number[] };
  for (let r = 0; r < rounds; r++)
    for (const [name, run] of [
      ['before', before],
      ['after', after],
    ] as const) {
      const started = performance.now();
      await run();
      times[name].push(performance.now() - started);
    }
  const result = {
    date: new Date().toISOString(),
    machine: { ...machineInfo(), load: loadAverage1m() },
    stored: Object.fromEntries(Object.entries(all).map(([name, list]) => [name, list.length])),
    asked: { invoices: mine, sessions: 2 * mine, prices: 20, rows: JSON.parse(expected).length },
    rounds,
    medianMs: { before: +median(times.before).toFixed(1), after: +median(times.after).toFixed(1) },
    ms: {
      before: times.before.map((ms) => +ms.toFixed(1)),
      after: times.after.map((ms) => +ms.toFixed(1)),
    },
  };
  console.log(JSON.stringify(result, null, 2));
  const json = args.value('--json');
  if (json) await writeFile(json, `${JSON.stringify(result, null, 2)}\n`);
}

await main();
