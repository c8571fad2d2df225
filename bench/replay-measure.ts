/**
 * One measurement for bench/replay.ts, in a fresh process so its peak RSS is the replay's own:
 * open the SQLite log, time a full `readAll` pass, then time
 * `createProjectionRunner({ ALL_PROJECTIONS }).rebuild()` into a fresh embedded read store (the
 * same store, indexes and projections `weir serve` uses at start). Prints one JSON line.
 *
 *   node --import tsx bench/replay-measure.ts PATH/events.sqlite3 [--batch 250] [--skip-read-all] [--read-store FILE]
 *
 * `--read-store FILE`: rebuild into the SQLite read store `weir serve` keeps in the data dir, at
 * FILE (emptied first), instead of the in-memory one.
 */
import { rmSync } from 'node:fs';
import { createSqliteEventStore } from '../src/event-store/sqlite-event-store.ts';
import { ALL_PROJECTIONS, INDEXED_FIELDS } from '../src/projections/all-projections.ts';
import { createProjectionRunner } from '../src/projections/projection-runner.ts';
import { createEmbeddedReadStore } from '../src/read-store/embedded-read-store.ts';
import { createSqliteReadStore } from '../src/read-store/sqlite-read-store.ts';

export type ReplayMeasurement = {
  events: number;
  readAll: { batchSize: number; ms: number; eventsPerSecond: number } | null;
  /** Wall time, and the CPU time this process spent (user + system): less sensitive to other load on the machine. */
  rebuild: { ms: number; cpuMs: number; eventsPerSecond: number };
  rssMiB: { atStart: number; afterReadAll: number; peakDuringRebuild: number; afterRebuild: number; maxRss: number };
  heapUsedMiBAfterRebuild: number;
  documents: Record<string, number>;
};

const mib = (bytes: number) => Math.round(bytes / (1024 * 1024));

async function main(argv: string[]): Promise<void> {
  const path = argv[0];
  if (!path || path.startsWith('--'))
    throw new Error('usage: replay-measure.ts PATH/events.sqlite3 [--batch N] [--skip-read-all]');
  const batchIndex = argv.indexOf('--batch');
  const batchSize = batchIndex >= 0 ? Number(argv[batchIndex + 1]) : 250;
  const rssAtStart = process.memoryUsage.rss();
  const eventStore = createSqliteEventStore({ path });

  let readAll: ReplayMeasurement['readAll'] = null;
  if (!argv.includes('--skip-read-all')) {
    const started = performance.now();
    let count = 0;
    for (let after: bigint | null = null; ; ) {
      const batch = await eventStore.readAll(after, batchSize);
      if (batch.length === 0) break;
      count += batch.length;
      after = batch[batch.length - 1]!.position;
    }
    const ms = performance.now() - started;
    readAll = { batchSize, ms: Math.round(ms), eventsPerSecond: Math.round(count / (ms / 1000)) };
  }
  const rssAfterReadAll = process.memoryUsage.rss();

  const storeIndex = argv.indexOf('--read-store');
  const storeFile = storeIndex >= 0 ? argv[storeIndex + 1] : undefined;
  if (storeFile !== undefined)
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${storeFile}${suffix}`, { force: true });
  const readStore =
    storeFile === undefined
      ? createEmbeddedReadStore({ indexedFields: INDEXED_FIELDS, writes: 'trusted' })
      : createSqliteReadStore({ path: storeFile, indexedFields: INDEXED_FIELDS, writes: 'trusted' });
  const runner = createProjectionRunner({ eventStore, readStore, projections: ALL_PROJECTIONS });
  let peak = process.memoryUsage.rss();
  const cpuBefore = process.cpuUsage();
  const rebuilt = await runner.rebuild(() => {
    const rss = process.memoryUsage.rss();
    if (rss > peak) peak = rss;
  });
  // The SQLite store's last writes are committed by close: part of the rebuild's time.
  const closing = performance.now();
  if (storeFile !== undefined) await readStore.close();
  const result = { events: rebuilt.events, ms: rebuilt.ms + (performance.now() - closing) };
  const cpu = process.cpuUsage(cpuBefore);
  const rssAfterRebuild = process.memoryUsage.rss();

  const documents: Record<string, number> = {};
  const counted =
    storeFile === undefined
      ? readStore
      : createSqliteReadStore({ path: storeFile, indexedFields: INDEXED_FIELDS, writes: 'trusted' });
  for (const name of ALL_PROJECTIONS.flatMap((projection) => projection.collections))
    documents[name] = await counted.collection(name).count({});
  if (counted !== readStore) await counted.close();

  const measurement: ReplayMeasurement = {
    events: result.events,
    readAll,
    rebuild: {
      ms: Math.round(result.ms),
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      eventsPerSecond: Math.round(result.events / (result.ms / 1000)),
    },
    rssMiB: {
      atStart: mib(rssAtStart),
      afterReadAll: mib(rssAfterReadAll),
      peakDuringRebuild: mib(Math.max(peak, rssAfterRebuild)),
      afterRebuild: mib(rssAfterRebuild),
      maxRss: mib(process.resourceUsage().maxRSS * 1024),
    },
    heapUsedMiBAfterRebuild: mib(process.memoryUsage().heapUsed),
    documents,
  };
  await eventStore.close();
  console.log(JSON.stringify(measurement));
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
