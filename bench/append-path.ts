/**
 * The embedded event store's append path alone, to compare a change to it before and after: N
 * appends of one realistic event each into a fresh SQLite file (WAL, synchronous=FULL, as `weir
 * serve` writes), (a) one at a time, each awaited (a transaction and an fsync each), and (b) in
 * bursts of `--burst` appends asked for in one turn (group commit: one transaction per burst).
 * Reports wall time and this process's CPU time per append; the CPU figure is the one other load
 * on the machine skews least. Imports only the store, so the same file runs on an older tree.
 *
 *   node --import tsx bench/append-path.ts [--appends 20000] [--burst 100] [--runs 3] [--json FILE]
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NewEvent } from '../src/event-store/event-store.ts';
import { createSqliteEventStore } from '../src/event-store/sqlite-event-store.ts';
import { cliArgs } from './support/cli-args.ts';
import { report } from './support/report.ts';

/** About the size and shape of a `CheckoutSessionCreated` with one line item. */
const sessionCreated = (index: number): NewEvent => ({
  id: randomUUID(),
  type: 'CheckoutSessionCreated',
  data: {
    id: `cs_${index}`,
    mode: 'payment',
    currency: 'usdc',
    amountTotal: '300000000',
    amountSubtotal: '300000000',
    successUrl: 'https://shop.example/thanks?session={CHECKOUT_SESSION_ID}',
    cancelUrl: 'https://shop.example/cart',
    expiresAt: '2026-03-02T08:00:00.000Z',
    lineItems: [
      {
        priceId: `price_${index}`,
        productId: `prod_${index}`,
        description: 'Weir T-shirt',
        quantity: 2,
        unitAmount: '150000000',
        amountTotal: '300000000',
      },
    ],
    paymentMethods: ['usdc-base', 'usdc-polygon', 'usdt-ethereum'],
  },
  metadata: {
    organizationId: 'org_bench',
    environment: 'test',
    actor: 'api_key:key_bench',
    correlationId: randomUUID(),
    clientAddress: '203.0.113.7',
    occurredAt: '2026-03-01T08:00:00.000Z',
  },
});

type Measured = { appends: number; ms: number; cpuMs: number; usPerAppendCpu: number; appendsPerSecond: number };

async function measure(appends: number, burst: number): Promise<Measured> {
  const directory = await mkdtemp(join(tmpdir(), 'weir-bench-append-'));
  const store = createSqliteEventStore({ path: join(directory, 'events.sqlite3') });
  try {
    const events = Array.from({ length: appends }, (_, index) => sessionCreated(index));
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    for (let index = 0; index < appends; index += burst) {
      const slice = events.slice(index, index + burst);
      await Promise.all(
        slice.map((event, offset) => store.append(`checkout_session-${index + offset}`, [event], 'no_stream')),
      );
    }
    const ms = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    const cpuMs = (cpu.user + cpu.system) / 1000;
    return {
      appends,
      ms: Math.round(ms),
      cpuMs: Math.round(cpuMs),
      usPerAppendCpu: +((cpuMs * 1000) / appends).toFixed(1),
      appendsPerSecond: Math.round(appends / (ms / 1000)),
    };
  } finally {
    await store.close();
    await rm(directory, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { integer, value } = cliArgs(process.argv.slice(2));
  const appends = integer('--appends', 20_000, 1_000_000);
  const burst = integer('--burst', 100, 10_000);
  const runs = integer('--runs', 3, 20);
  const loadBefore = +loadavg()[0]!.toFixed(2);
  const single: Measured[] = [];
  const bursts: Measured[] = [];
  for (let run = 0; run < runs; run += 1) {
    // Fewer one-at-a-time appends: each waits for its own fsync.
    single.push(await measure(Math.max(1, Math.floor(appends / 10)), 1));
    bursts.push(await measure(appends, burst));
    process.stderr.write(
      `[bench:append] run ${run + 1}/${runs}: one at a time ${single.at(-1)!.usPerAppendCpu} µs CPU/append, bursts of ${burst} ${bursts.at(-1)!.usPerAppendCpu} µs CPU/append\n`,
    );
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const summary = {
    date: new Date().toISOString(),
    node: process.version,
    single,
    bursts,
    median: {
      singleUsPerAppendCpu: median(single.map((m) => m.usPerAppendCpu)),
      singleAppendsPerSecond: median(single.map((m) => m.appendsPerSecond)),
      burstUsPerAppendCpu: median(bursts.map((m) => m.usPerAppendCpu)),
      burstAppendsPerSecond: median(bursts.map((m) => m.appendsPerSecond)),
    },
    loadAverage: { before: loadBefore, after: +loadavg()[0]!.toFixed(2) },
  };
  const table = [
    '| Appends | runs: CPU µs per append | median CPU µs per append | median appends/s |',
    '|---|---|---:|---:|',
    `| one at a time (${single[0]!.appends} per run) | ${single.map((m) => m.usPerAppendCpu).join(' / ')} | ${summary.median.singleUsPerAppendCpu} | ${summary.median.singleAppendsPerSecond.toLocaleString('en-US')} |`,
    `| bursts of ${burst} (${appends} per run) | ${bursts.map((m) => m.usPerAppendCpu).join(' / ')} | ${summary.median.burstUsPerAppendCpu} | ${summary.median.burstAppendsPerSecond.toLocaleString('en-US')} |`,
  ].join('\n');
  await report(summary, table, [], value('--json') ?? null);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
