/**
 * The heap the SQLite event store's shared recent events hold when full (SHARED_EVENTS, 4,096
 * parsed and frozen events): a realistic log is written through the command handlers
 * (bench/support/realistic-log.ts), then a fresh store on the file is read whole by `readAll` as a
 * follower reads it, keeping nothing; the heap after a full GC, against the same store idle just before.
 *
 *   node --expose-gc --import tsx bench/event-cache-memory.ts [--events 20000] [--batch 250] [--json FILE]
 *   (npm run bench:event-cache)
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { setImmediate, setTimeout } from 'node:timers/promises';
import { join } from 'node:path';
import type { EventStore } from '../src/event-store/event-store.ts';
import { SQLITE_EVENT_STORE_FILE } from '../src/event-store/open-event-store.ts';
import { createSqliteEventStore } from '../src/event-store/sqlite-event-store.ts';
import { cliArgs } from './support/cli-args.ts';
import { writeRealisticLog } from './support/realistic-log.ts';

/** As sqlite-event-store.ts keeps them. */
const SHARED_EVENTS = 4096;
const MiB = 1024 * 1024;

async function main(): Promise<void> {
  const args = cliArgs(process.argv.slice(2));
  const targetEvents = args.integer('--events', 20_000, 1_000_000);
  const batch = args.integer('--batch', 250, 10_000);
  const jsonOut = args.value('--json') ?? null;
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-bench-event-cache-'));
  const path = join(dataDir, SQLITE_EVENT_STORE_FILE);
  try {
    const writer = createSqliteEventStore({ path });
    const written = await writeRealisticLog({ eventStore: writer, targetEvents });
    await writer.close();

    // Twice, each on a fresh store: the two should agree.
    const passes: Awaited<ReturnType<typeof fillCache>>[] = [];
    for (let pass = 0; pass < 2; pass++) passes.push(await fillCache(path, batch, written.events, gc));
    const { held, events, textBytes, largest } = passes[1]!;
    // A check on the figure: the same events parsed and kept in an array, outside any store.
    const control = await keptCopies(path, written.events, gc);
    const cached = Math.min(events, SHARED_EVENTS);
    const result = {
      date: new Date().toISOString(),
      node: process.version,
      log: { events, sessions: written.sessions, eventTypes: written.eventTypes },
      cache: {
        events: cached,
        heapMiB: +(held / MiB).toFixed(2),
        firstPassHeapMiB: +(passes[0]!.held / MiB).toFixed(2),
        releasedOnCloseMiB: passes.map((p) => +(p.released / MiB).toFixed(2)),
        keptOutsideHeapMiB: +(control / MiB).toFixed(2),
        bytesPerEvent: Math.round(held / cached),
        jsonBytesPerEvent: Math.round(textBytes / cached),
        largestType: largest,
        // Heap per JSON byte as measured, applied to a cache holding only the largest kind.
        largestTypeFullCacheMiB: +(((held / textBytes) * largest.jsonBytesPerEvent * SHARED_EVENTS) / MiB).toFixed(2),
      },
    };
    console.log(JSON.stringify(result, null, 2));
    if (jsonOut) await writeFile(jsonOut, `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** The heap a fresh store holds after `readAll` has read the whole log once, a batch at a time. */
async function fillCache(path: string, batch: number, total: number, gc: () => void) {
  let store: EventStore | null = createSqliteEventStore({ path });
  // One read first, so the statements and the store's own state are in the baseline.
  await store.readAll(null, 1);
  const before = await settledHeap(gc);
  let events = 0;
  let textBytes = 0;
  /** JSON bytes per event by type over the whole log: a cache full of the largest kind holds more. */
  const byType = new Map<string, { events: number; bytes: number }>();
  for (let after: bigint | null = null; ; ) {
    const page = await store.readAll(after, batch);
    if (page.length === 0) break;
    // The JSON text of the last SHARED_EVENTS: what the cache holds, parsed.
    for (const event of page) {
      const bytes = JSON.stringify(event.data).length + JSON.stringify(event.metadata).length;
      if (++events > total - SHARED_EVENTS) textBytes += bytes;
      const kind = byType.get(event.type) ?? { events: 0, bytes: 0 };
      byType.set(event.type, { events: kind.events + 1, bytes: kind.bytes + bytes });
    }
    after = page[page.length - 1]!.position;
  }
  const filled = await settledHeap(gc);
  await store.close();
  store = null;
  // What letting the store go gives back: the cache again, seen from the other side.
  const released = filled - (await settledHeap(gc));
  const [largestType, largest] = [...byType].sort(([, a], [, b]) => b.bytes / b.events - a.bytes / a.events)[0]!;
  return {
    held: filled - before,
    released,
    events,
    textBytes,
    largest: { type: largestType, jsonBytesPerEvent: Math.round(largest.bytes / largest.events) },
  };
}

/**
 * The heap after a full GC, once what was let go is collectable: a store closed just before is
 * still reachable from its pending callbacks for a few turns (counted in the baseline, it hid a
 * whole cache).
 */
async function settledHeap(gc: () => void): Promise<number> {
  for (let turn = 0; turn < 5; turn++) {
    await setImmediate();
    gc();
  }
  await setTimeout(50);
  gc();
  return process.memoryUsage().heapUsed;
}

/** The heap the log's last SHARED_EVENTS events take when a reader keeps its own copies of them. */
async function keptCopies(path: string, total: number, gc: () => void): Promise<number> {
  const store = createSqliteEventStore({ path });
  let texts: string[] = [];
  for (let after: bigint | null = null; ; ) {
    const page = await store.readAll(after, 1000);
    if (page.length === 0) break;
    texts = [...texts, ...page.map((event) => JSON.stringify({ ...event, position: String(event.position) }))].slice(
      -SHARED_EVENTS,
    );
    after = page[page.length - 1]!.position;
  }
  await store.close();
  const before = await settledHeap(gc);
  const kept = texts.map((text) => JSON.parse(text) as unknown);
  const held = (await settledHeap(gc)) - before;
  if (kept.length !== Math.min(total, SHARED_EVENTS)) throw new Error('not every event was kept');
  return held;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
