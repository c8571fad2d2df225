import test from 'ava';
import type { AdvanceListener } from '../projections/projection-runner.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import type { Collection, ReadStore } from '../read-store/read-store.ts';
import { createManualClock } from '../shared/clock.ts';
import { InvalidStateError } from '../shared/errors.ts';
import { createReadModelQueue } from './read-model-queue.ts';

const T0 = Date.parse('2026-06-01T00:00:00.000Z');
const COLLECTION = 'work';

type WorkDoc = { _id: string; at: number };

/** Lets the queue's promises run, no time passing on any clock, until `done()` holds. */
async function until(done: () => boolean, what: string): Promise<void> {
  for (let turn = 0; turn < 200 && !done(); turn++) await new Promise((resolve) => setImmediate(resolve));
  if (!done()) throw new Error(`expected ${what}`);
}

/**
 * A queue over a real embedded read store and a manual clock. `outcomes[id]` says what each try of
 * a document does in turn ('done' removes it, 'appended' leaves it listed as if the read model
 * lagged, 'fail' throws, 'refuse' is a domain refusal); a document without outcomes is done.
 * The tests never sleep: `runOnce` joins the pass under way (one the clock woke, say) and runs one
 * more at the same time, which shows what is not due yet.
 */
function setUp(options: { readStore?: (store: ReadStore) => ReadStore } = {}) {
  const clock = createManualClock(T0);
  const store = createEmbeddedReadStore({});
  const docs = store.collection<WorkDoc>(COLLECTION);
  const outcomes: Record<string, ('done' | 'appended' | 'fail' | 'refuse')[]> = {};
  const calls: [string, number][] = [];
  const lines: string[] = [];
  let advanced: AdvanceListener | null = null;
  const queue = createReadModelQueue<WorkDoc>({
    name: 'test-queue',
    collection: COLLECTION,
    clock,
    readStore: options.readStore ? options.readStore(store) : store,
    projections: {
      waitFor: async () => {},
      onAdvanced: (listener) => {
        advanced = listener;
        return () => {
          advanced = null;
        };
      },
    },
    sortBy: 'at',
    async work(doc) {
      calls.push([doc._id, clock.now()]);
      const outcome = outcomes[doc._id]?.shift() ?? 'done';
      if (outcome === 'fail') throw new Error(`no route to ${doc._id}`);
      if (outcome === 'refuse') throw new InvalidStateError(`${doc._id} is closed`);
      if (outcome === 'done') await docs.delete(doc._id);
      return 1n;
    },
    log: (line) => lines.push(line),
  });
  const triesOf = (id: string): number[] => calls.filter(([called]) => called === id).map(([, at]) => at);
  /** What a projection writing to the work list does: tells the queue. */
  const touch = () => advanced?.(1n, new Set([COLLECTION]));
  return { clock, docs, outcomes, calls, lines, queue, triesOf, touch };
}

test('a failing document is retried on the clock, backing off from 1 s doubling to 5 min, while the others are done', async (t) => {
  const { clock, docs, outcomes, lines, queue, triesOf, touch } = setUp();
  t.teardown(() => queue.stop());
  await docs.put({ _id: 'a', at: 1 });
  await docs.put({ _id: 'poison', at: 2 });
  await docs.put({ _id: 'c', at: 3 });
  outcomes.poison = Array<'fail'>(12).fill('fail');

  queue.start();
  await queue.runOnce();
  t.deepEqual(triesOf('poison'), [T0], 'tried once, not again by the pass that followed');
  t.deepEqual(triesOf('c'), [T0], 'the document after the failing one was done');
  t.deepEqual(
    (await docs.find({})).map((doc) => doc._id),
    ['poison'],
  );
  t.deepEqual(lines, [
    '[test-queue] poison failed (attempt 1); retrying in 1000 ms, at 2026-06-01T00:00:01.000Z: no route to poison',
  ]);

  // New work arriving meanwhile is done at once; the failing document still waits.
  await docs.put({ _id: 'd', at: 4 });
  touch();
  await queue.runOnce();
  t.deepEqual(triesOf('d'), [T0]);
  t.deepEqual(triesOf('poison'), [T0]);

  const waits = [1000, 2000, 4000, 8000, 16_000, 32_000, 64_000, 128_000, 256_000, 300_000, 300_000];
  for (const [i, wait] of waits.entries()) {
    const tries = triesOf('poison').length;
    clock.advanceBy(wait - 1);
    await queue.runOnce();
    t.is(triesOf('poison').length, tries, `not retried ${wait - 1} ms after failure ${i + 1}`);
    clock.advanceBy(1);
    // The clock's wake-up alone runs the retry.
    await until(() => triesOf('poison').length > tries, `a retry ${wait} ms after failure ${i + 1}`);
    await queue.runOnce();
    t.is(triesOf('poison').length, tries + 1, `retried once ${wait} ms after failure ${i + 1}`);
    t.is(triesOf('poison').at(-1), clock.now());
    const next = waits[i + 1] ?? 300_000;
    t.true(
      lines
        .at(-1)!
        .startsWith(
          `[test-queue] poison failed (attempt ${i + 2}); retrying in ${next} ms, at ${new Date(clock.now() + next).toISOString()}: `,
        ),
      lines.at(-1),
    );
  }
  t.is(lines.length, waits.length + 1, 'one line per failure, no flood');

  // The store is back: done at the next retry, and nothing is scheduled any more.
  clock.advanceBy(300_000);
  await until(() => triesOf('poison').length > waits.length + 1, 'the last retry');
  await queue.runOnce();
  t.deepEqual(await docs.find({}), []);
  const tries = triesOf('poison').length;
  clock.advanceBy(3_600_000);
  await queue.runOnce();
  t.is(triesOf('poison').length, tries);
});

test('a success clears the backoff: the next failure waits a second again', async (t) => {
  const { clock, docs, outcomes, lines, queue, triesOf } = setUp();
  t.teardown(() => queue.stop());
  await docs.put({ _id: 'flaky', at: 1 });
  // 'appended' leaves the document listed (its events are in the log, the read model lags), so it is tried again.
  outcomes.flaky = ['fail', 'fail', 'fail', 'appended', 'fail'];

  queue.start();
  await queue.runOnce();
  for (const [tries, wait] of [
    [1, 1000],
    [2, 2000],
  ] as const) {
    clock.advanceBy(wait);
    await until(() => triesOf('flaky').length > tries, `retry ${tries}`);
    await queue.runOnce();
  }
  t.is(triesOf('flaky').length, 3);
  t.regex(lines.at(-1)!, /flaky failed \(attempt 3\); retrying in 4000 ms/);

  clock.advanceBy(4000);
  await until(() => triesOf('flaky').length > 3, 'retry 3');
  await queue.runOnce();
  // The fourth try succeeded; the pass after it tried again at once and failed: a first failure.
  t.deepEqual(triesOf('flaky'), [T0, T0 + 1000, T0 + 3000, T0 + 7000, T0 + 7000]);
  t.regex(lines.at(-1)!, /flaky failed \(attempt 1\); retrying in 1000 ms/);
  clock.advanceBy(1000);
  await until(() => triesOf('flaky').length > 5, 'the retry after the new failure');
  await queue.runOnce();
  t.deepEqual(await docs.find({}), []);
});

test('when the work list cannot be read, the whole queue backs off on the clock', async (t) => {
  let unavailable = true;
  let reads = 0;
  const { clock, docs, lines, queue, triesOf, touch } = setUp({
    readStore: (store) => ({
      ...store,
      collection<T extends { _id: string }>(name: string): Collection<T> {
        const collection = store.collection<T>(name);
        return {
          ...collection,
          async find(filter, options) {
            reads += 1;
            if (unavailable) throw new Error('read store unavailable');
            return collection.find(filter, options);
          },
        };
      },
    }),
  });
  t.teardown(() => queue.stop());
  await docs.put({ _id: 'a', at: 1 });

  queue.start();
  await queue.runOnce();
  t.is(reads, 1, 'the failed pass is not repeated by the next poke');
  t.deepEqual(lines, [
    '[test-queue] pass failed (attempt 1); retrying in 1000 ms, at 2026-06-01T00:00:01.000Z: read store unavailable',
  ]);
  touch();
  clock.advanceBy(999);
  await queue.runOnce();
  t.is(reads, 1, 'neither new work nor a pass asked for reads the list before the retry');

  clock.advanceBy(1);
  await until(() => reads > 1, 'the retry of the pass');
  await queue.runOnce();
  t.is(reads, 2);
  t.regex(
    lines.at(-1)!,
    /^\[test-queue\] pass failed \(attempt 2\); retrying in 2000 ms, at 2026-06-01T00:00:03.000Z: read store unavailable$/,
  );

  unavailable = false;
  clock.advanceBy(1999);
  await queue.runOnce();
  t.deepEqual(triesOf('a'), []);
  clock.advanceBy(1);
  await until(() => triesOf('a').length > 0, 'the second retry of the pass');
  await queue.runOnce();
  t.deepEqual(triesOf('a'), [T0 + 3000]);

  // A success resets the queue's backoff too.
  unavailable = true;
  touch();
  await queue.runOnce();
  t.regex(lines.at(-1)!, /pass failed \(attempt 1\); retrying in 1000 ms/);
});

test('a refusal of the domain is logged once and never retried; stop cancels a scheduled retry', async (t) => {
  const { clock, docs, outcomes, lines, queue, triesOf } = setUp();
  await docs.put({ _id: 'closed', at: 1 });
  await docs.put({ _id: 'failing', at: 2 });
  outcomes.closed = ['refuse'];
  outcomes.failing = ['fail'];

  queue.start();
  await queue.runOnce();
  t.deepEqual(lines.slice(0, 1), ['[test-queue] closed cannot be done: closed is closed']);
  await queue.stop();
  clock.advanceBy(3_600_000);
  await queue.runOnce();
  t.deepEqual(triesOf('closed'), [T0]);
  t.deepEqual(triesOf('failing'), [T0]);
});
