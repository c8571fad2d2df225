/**
 * What a rebuild cannot go below on this machine: how much of the 100,000 events/s budget is spent
 * before any projection logic runs. Each step runs `--runs` times, each in a fresh process, on the
 * same log:
 *
 * - `fetch`: the rows of the whole log from SQLite in batches of 250, with the statement `readAll`
 *   uses, and no `JSON.parse`: what reading costs before any event becomes an object.
 * - `read`: `readAll` through the whole log in batches of 250 (SQLite fetch and `JSON.parse`),
 *   keeping nothing.
 * - `read-keep-sessions`: the same, keeping the session object of every `CheckoutSessionCreated`
 *   (the document the checkout sessions read model starts from), and nothing else: no projection code.
 * - `sessions-projection`: `rebuild()` with the checkout sessions projection alone.
 * - `rebuild`: `rebuild()` with every projection (what `bench:replay` measures).
 * - `receive`: the finished read models handed over by another thread or process, the one way to
 *   split a rebuild across cores: `v8.deserialize` of every collection's documents (what a
 *   worker's `postMessage` costs the receiving thread), and `JSON.parse` of them, timed after an
 *   untimed rebuild.
 *
 *   node --import tsx bench/replay-floor.ts PATH/events.sqlite3 [--runs 3] [--json FILE]
 *   (a log from `npm run bench:replay -- --keep`)
 *
 * Not a test: prints a JSON summary and a Markdown table.
 */
import Database from 'better-sqlite3';
import { execFile } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { deserialize, serialize } from 'node:v8';
import type { RecordedEvent } from '../src/event-store/event-store.ts';
import { createSqliteEventStore, READ_ALL_SQL } from '../src/event-store/sqlite-event-store.ts';
import { ALL_PROJECTIONS, INDEXED_FIELDS } from '../src/projections/all-projections.ts';
import { checkoutSessionsProjection } from '../src/projections/checkout-sessions.projection.ts';
import type { Projection } from '../src/projections/projection.ts';
import { createProjectionRunner } from '../src/projections/projection-runner.ts';
import { createEmbeddedReadStore } from '../src/read-store/embedded-read-store.ts';
import type { ReadStore } from '../src/read-store/read-store.ts';
import { cliArgs } from './support/cli-args.ts';
import { report } from './support/report.ts';

const TARGET_EVENTS_PER_SECOND = 100_000;
const BATCH = 250;
const STEPS = ['fetch', 'read', 'read-keep-sessions', 'sessions-projection', 'rebuild', 'receive'] as const;
type Step = (typeof STEPS)[number];
/** One child's timings, in ms. `receive` reports two. */
type StepResult = { events: number; ms: Record<string, number> };

const elapsed = (started: number) => Math.round(performance.now() - started);

async function readThrough(path: string, keep: (event: RecordedEvent) => void): Promise<number> {
  const eventStore = createSqliteEventStore({ path });
  let events = 0;
  for (let after: bigint | null = null; ; ) {
    const batch = await eventStore.readAll(after, BATCH);
    if (batch.length === 0) break;
    for (const event of batch) keep(event);
    events += batch.length;
    after = batch[batch.length - 1]!.position;
  }
  await eventStore.close();
  return events;
}

async function rebuildWith(
  path: string,
  projections: Projection[],
): Promise<{ events: number; ms: number; readStore: ReadStore }> {
  const eventStore = createSqliteEventStore({ path });
  const readStore = createEmbeddedReadStore({ indexedFields: INDEXED_FIELDS, writes: 'trusted' });
  const result = await createProjectionRunner({ eventStore, readStore, projections }).rebuild();
  await eventStore.close();
  return { events: result.events, ms: Math.round(result.ms), readStore };
}

/** The log's rows as SQLite hands them over, batch by batch as `readAll` asks, and nothing more. */
function fetchRows(path: string): number {
  const db = new Database(path, { readonly: true });
  const statement = db.prepare<[bigint, number], [bigint, ...unknown[]]>(READ_ALL_SQL).raw(true).safeIntegers(true);
  let events = 0;
  for (let after = 0n; ; ) {
    const rows = statement.all(after, BATCH);
    if (rows.length === 0) break;
    events += rows.length;
    after = rows[rows.length - 1]![0];
  }
  db.close();
  return events;
}

async function measure(step: Step, path: string): Promise<StepResult> {
  if (step === 'fetch') {
    const started = performance.now();
    const events = fetchRows(path);
    return { events, ms: { fetch: elapsed(started) } };
  }
  if (step === 'read' || step === 'read-keep-sessions') {
    const kept = new Map<string, unknown>();
    const keep =
      step === 'read'
        ? () => {}
        : (event: RecordedEvent) => {
            if (event.type === 'CheckoutSessionCreated')
              kept.set(event.streamId, (event.data as { session: unknown }).session);
          };
    const started = performance.now();
    const events = await readThrough(path, keep);
    return { events, ms: { [step]: elapsed(started) } };
  }
  if (step === 'sessions-projection' || step === 'rebuild') {
    const { events, ms } = await rebuildWith(path, step === 'rebuild' ? ALL_PROJECTIONS : [checkoutSessionsProjection]);
    return { events, ms: { [step]: ms } };
  }
  const { events, readStore } = await rebuildWith(path, ALL_PROJECTIONS);
  const collections: Record<string, unknown[]> = {};
  for (const name of ALL_PROJECTIONS.flatMap((projection) => projection.collections))
    collections[name] = await readStore.collection(name).find({});
  const serialized = serialize(collections);
  const json = JSON.stringify(collections);
  let started = performance.now();
  deserialize(serialized);
  const deserializeMs = elapsed(started);
  started = performance.now();
  JSON.parse(json);
  return { events, ms: { 'receive (v8.deserialize)': deserializeMs, 'receive (JSON.parse)': elapsed(started) } };
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : Math.round((sorted[middle - 1]! + sorted[middle]!) / 2);
};

async function main(argv: string[]): Promise<void> {
  if (argv[0] === '--child') {
    console.log(JSON.stringify(await measure(argv[1] as Step, argv[2]!)));
    return;
  }
  const path = argv[0];
  if (!path || path.startsWith('--'))
    throw new Error('usage: replay-floor.ts PATH/events.sqlite3 [--runs 3] [--json FILE]');
  const { integer, value } = cliArgs(argv);
  const runs = integer('--runs', 3, 20);
  const run = promisify(execFile);
  const script = fileURLToPath(import.meta.url);
  const loadBefore = +loadavg()[0]!.toFixed(2);
  const samples = new Map<string, number[]>();
  let events = 0;
  // Steps alternate within each round, so a change in the machine's speed touches all of them alike.
  for (let round = 0; round < runs; round++) {
    for (const step of STEPS) {
      const { stdout } = await run(process.execPath, ['--import', 'tsx', script, '--child', step, path], {
        maxBuffer: 16 * 2 ** 20,
      });
      const result = JSON.parse(stdout.trim().split('\n').pop()!) as StepResult;
      events = result.events;
      for (const [name, ms] of Object.entries(result.ms)) samples.set(name, [...(samples.get(name) ?? []), ms]);
      process.stderr.write(`[bench:replay-floor] round ${round + 1}/${runs} ${step}: ${JSON.stringify(result.ms)}\n`);
    }
  }
  const budgetMs = Math.round((events / TARGET_EVENTS_PER_SECOND) * 1000);
  const steps = [...samples].map(([name, values]) => ({
    name,
    medianMs: median(values),
    runsMs: values,
    shareOfBudget: +(median(values) / budgetMs).toFixed(2),
  }));
  const summary = {
    date: new Date().toISOString(),
    node: process.version,
    log: path,
    events,
    budgetMs,
    steps,
    loadAverage: { before: loadBefore, after: +loadavg()[0]!.toFixed(2) },
  };
  const table = [
    `| Step (${events.toLocaleString('en-US')} events) | median | runs | share of the ${budgetMs.toLocaleString('en-US')} ms budget |`,
    '|---|---:|---|---:|',
    ...steps.map(
      (s) => `| ${s.name} | ${s.medianMs} ms | ${s.runsMs.join(' / ')} | ${Math.round(s.shareOfBudget * 100)}% |`,
    ),
  ].join('\n');
  await report(
    summary,
    table,
    [`Budget at ${TARGET_EVENTS_PER_SECOND.toLocaleString('en-US')} events/s: ${budgetMs} ms for the whole rebuild`],
    value('--json') ?? null,
  );
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
