import test from 'ava';
import { createPrometheusMetrics } from '../app/prometheus-metrics.ts';
import { createMemoryLeaseStore } from '../ownership/lease-store.ts';
import { LeaseLostError } from '../ownership/lease.ts';
import { createOwnership } from '../ownership/ownership.ts';
import { createManualClock, type Clock } from '../shared/clock.ts';
import {
  createPollingProcessor,
  createProcessor,
  dueWork,
  logWork,
  retryDelay,
  type Checkpoint,
  type LogWork,
  type ProcessorWork,
} from './processor.ts';

/** Let pending promises run (no time passes on the clock). */
const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
};

test('the retry wait doubles from its first value up to its cap; jitter draws within ± its fraction from the injected random', (t) => {
  const policy = { firstMs: 1_000, maxMs: 60_000 };
  t.deepEqual(
    [1, 2, 3, 6, 7, 50].map((n) => retryDelay(policy, n)),
    [1_000, 2_000, 4_000, 32_000, 60_000, 60_000],
  );
  const jittered = { ...policy, jitter: 0.2 };
  t.is(
    retryDelay(jittered, 2, () => 0),
    1_600,
  );
  t.is(
    retryDelay(jittered, 2, () => 0.5),
    2_000,
  );
  t.is(
    retryDelay(jittered, 2, () => 1),
    2_400,
  );
});

test('a failing pass is retried on the clock, the wait doubling per failure in a row and reset by a success; status tells the spell', async (t) => {
  const clock = createManualClock(0);
  const runs: number[] = [];
  const lines: string[] = [];
  let failing = 4;
  const processor = createProcessor({
    name: 'work',
    clock,
    retry: { firstMs: 1_000, maxMs: 5 * 60_000 },
    log: (line) => lines.push(line),
    recoveryLine: ({ attempts }) => `[work] recovered after ${attempts} failures`,
    work: dueWork({
      async runDue(now) {
        runs.push(now);
        if (failing > 0) {
          failing -= 1;
          throw new Error('store unreachable');
        }
      },
      nextDue: async () => null,
    }),
  });
  t.teardown(() => processor.stop());
  await processor.start();
  t.deepEqual(runs, [0]);
  t.like(processor.status(), {
    name: 'work',
    running: true,
    failing: { error: 'store unreachable', since: 0, attempts: 1, retryAt: 1_000 },
  });
  t.true(processor.failureCause() instanceof Error);

  let at = 0;
  for (const wait of [1_000, 2_000, 4_000, 8_000]) {
    clock.advanceTo(at + wait - 1);
    await settle();
    t.is(runs.length, [1_000, 2_000, 4_000, 8_000].indexOf(wait) + 1, `nothing before ${wait} ms`);
    clock.advanceTo(at + wait);
    await settle();
    at += wait;
    t.is(runs.at(-1), at);
  }
  t.deepEqual(runs, [0, 1_000, 3_000, 7_000, 15_000]);
  t.regex(lines[3]!, /^\[work\] failed \(4 time\(s\) in a row\); retrying in 8000 ms: Error: store unreachable/);
  t.is(lines[4], '[work] recovered after 4 failures');
  t.is(processor.status().failing, null);

  // The fifth pass succeeded: the next failure waits a second again.
  failing = 1;
  await processor.poke();
  clock.advanceTo(at + 999);
  await settle();
  t.is(runs.length, 6);
  clock.advanceTo(at + 1_000);
  await settle();
  t.is(runs.length, 7);
  t.regex(lines.at(-2)!, /\(1 time\(s\) in a row\); retrying in 1000 ms/);
});

test('the wait stops growing at its cap, and jitter keeps retries of two processors apart', async (t) => {
  const clock = createManualClock(0);
  const waits: number[] = [];
  const randoms = [0, 1];
  const processor = createProcessor({
    name: 'work',
    clock,
    retry: { firstMs: 1_000, maxMs: 300_000, jitter: 0.2 },
    random: () => randoms[waits.length % 2]!,
    failureLine: ({ waitMs }) => String(waitMs),
    log: (line) => waits.push(Number(line)),
    work: { pass: async () => Promise.reject(new Error('down')) },
  });
  t.teardown(() => processor.stop());
  await processor.start();
  for (let i = 0; i < 11; i++) {
    clock.advanceTo(clock.now() + waits.at(-1)!);
    await settle();
  }
  t.deepEqual(waits, [800, 2_400, 3_200, 9_600, 12_800, 38_400, 51_200, 153_600, 204_800, 360_000, 240_000, 360_000]);
});

test('a pass that says there is more never starves the event loop: timers and I/O run between passes', async (t) => {
  const clock = createManualClock(0);
  let passes = 0;
  const processor = createProcessor({
    name: 'stuck',
    clock,
    retry: { firstMs: 1_000, maxMs: 1_000 },
    work: { pass: async () => ({ more: ++passes < 50_000 }) },
  });
  t.teardown(() => processor.stop());
  const timerRanAfterPasses = new Promise<number>((resolve) => setTimeout(() => resolve(passes), 0));
  void processor.start();
  // A starved loop runs all 50,000 passes first; a yielding one a pass per turn, so the 1 ms timer
  // comes after some dozens or hundreds of turns (more on a fast, idle machine), never 10,000.
  t.true((await timerRanAfterPasses) < 10_000, 'a timer set before the processor started ran within its first passes');
});

test('passes never overlap: pokes during a pass cause exactly one more after it; nextAt wakes it on the clock', async (t) => {
  const clock = createManualClock(0);
  let release: (() => void) | null = null;
  let active = 0;
  let most = 0;
  const passes: number[] = [];
  const processor = createProcessor({
    name: 'work',
    clock,
    retry: { firstMs: 1_000, maxMs: 1_000 },
    work: {
      async pass(now) {
        active += 1;
        most = Math.max(most, active);
        passes.push(now);
        if (passes.length === 2) await new Promise<void>((resolve) => (release = resolve));
        active -= 1;
        return { nextAt: passes.length < 4 ? 5_000 : null };
      },
    },
  });
  t.teardown(() => processor.stop());
  await processor.start();
  const second = processor.poke();
  await settle();
  void processor.poke();
  void processor.poke();
  release!();
  await second;
  t.deepEqual(passes, [0, 0, 0], 'the first, the poked one, and one more for both pokes during it');
  t.is(most, 1);
  clock.advanceTo(4_999);
  await settle();
  t.is(passes.length, 3);
  clock.advanceTo(5_000);
  await settle();
  t.deepEqual(passes, [0, 0, 0, 5_000]);
});

test('stopped, a processor passes no more: not on a poke, not on its retry, not on a wake-up of its source', async (t) => {
  const clock = createManualClock(0);
  let passes = 0;
  let wake: (() => void) | null = null;
  let unsubscribed = false;
  const processor = createProcessor({
    name: 'work',
    clock,
    retry: { firstMs: 1_000, maxMs: 1_000 },
    log: () => {},
    work: {
      async pass() {
        passes += 1;
        throw new Error('down');
      },
      subscribe(poke) {
        wake = poke;
        return () => {
          unsubscribed = true;
        };
      },
    },
  });
  await processor.start();
  wake!();
  await settle();
  t.is(passes, 2, 'a wake-up of its source passes again at once, even while backing off');
  await processor.stop();
  t.true(unsubscribed);
  t.false(processor.status().running);
  await processor.poke();
  clock.advanceBy(60_000);
  await settle();
  t.is(passes, 2);
});

test('exclusive work runs between passes; a poke meanwhile passes after it', async (t) => {
  const clock = createManualClock(0);
  const order: string[] = [];
  const processor = createProcessor({
    name: 'work',
    clock,
    retry: { firstMs: 1_000, maxMs: 1_000 },
    work: {
      async pass() {
        order.push('pass');
        return {};
      },
    },
  });
  t.teardown(() => processor.stop());
  await processor.start();
  const result = await processor.exclusive(async () => {
    void processor.poke();
    await settle();
    order.push('task');
    return 42;
  });
  t.is(result, 42);
  await settle();
  t.deepEqual(order, ['pass', 'task', 'pass']);
});

/** A log of numbered items, and a checkpoint store that outlives processors (a durable store). */
function numberedLog(count: number) {
  const items = Array.from({ length: count }, (_, i) => BigInt(i + 1));
  let saved: bigint | null = null;
  const checkpoint: Checkpoint = {
    load: async () => saved,
    save: async (position) => {
      saved = position;
    },
  };
  const read = async (after: bigint | null, limit: number) =>
    items.filter((p) => after === null || p > after).slice(0, limit);
  return { items, checkpoint, read, saved: () => saved };
}

/** A processor over a log consumer's work, showing its position; a second's wait after a failure unless told. */
const consumerOf = (clock: Clock, work: LogWork, options: Partial<Parameters<typeof createProcessor>[0]> = {}) =>
  createProcessor({
    name: 'consumer',
    clock,
    retry: { firstMs: 1_000, maxMs: 1_000 },
    log: () => {},
    work,
    position: work.position,
    ...options,
  });

test('a log consumer handles batches after its checkpoint, saves each batch position, and resumes from it', async (t) => {
  const clock = createManualClock(0);
  const log = numberedLog(7);
  const handled: bigint[][] = [];
  let failOn: bigint | null = 6n;
  const consumer = () => {
    const work = logWork<bigint>({
      checkpoint: log.checkpoint,
      batchSize: 3,
      read: log.read,
      positionOf: (p) => p,
      async handle(batch) {
        if (failOn !== null && batch.includes(failOn)) throw new Error(`cannot handle ${failOn}`);
        handled.push([...batch]);
      },
    });
    return consumerOf(clock, work);
  };
  const first = consumer();
  await first.start();
  t.deepEqual(handled, [[1n, 2n, 3n]]);
  t.is(log.saved(), 3n);
  t.like(first.status(), { position: '3', failing: { attempts: 1, error: 'cannot handle 6' } });
  await first.stop();

  // A new process resumes at the checkpoint: nothing handled twice.
  failOn = null;
  const second = consumer();
  t.teardown(() => second.stop());
  await second.start();
  t.deepEqual(handled, [[1n, 2n, 3n], [4n, 5n, 6n], [7n]]);
  t.like(second.status(), { position: '7', failing: null });
});

test('a batch that goes through ends a spell of failures: in a long catch-up, a failure after progress waits the first step again', async (t) => {
  const clock = createManualClock(0);
  const log = numberedLog(4);
  const failOnce = new Set([1n, 3n]);
  const waits: number[] = [];
  const work = logWork<bigint>({
    checkpoint: log.checkpoint,
    batchSize: 1,
    read: log.read,
    positionOf: (p) => p,
    async handle([item]) {
      if (failOnce.delete(item!)) throw new Error(`cannot handle ${item}`);
    },
  });
  const processor = consumerOf(clock, work, {
    retry: { firstMs: 1_000, maxMs: 60_000 },
    failureLine: ({ waitMs }) => String(waitMs),
    log: (line) => waits.push(Number(line)),
  });
  t.teardown(() => processor.stop());
  await processor.start();
  t.deepEqual(waits, [1_000]);

  // Batches 1 and 2 go through, batch 3 fails: the log is not caught up, yet the spell began anew.
  clock.advanceTo(1_000);
  await settle();
  t.deepEqual(waits, [1_000, 1_000]);
  t.like(processor.status(), { position: '2', failing: { attempts: 1, since: 1_000, retryAt: 2_000 } });

  clock.advanceTo(2_000);
  await settle();
  t.like(processor.status(), { position: '4', failing: null });
  t.is(log.saved(), 4n);
});

test('a checkpoint save that fails leaves the position at the stored checkpoint: the retry handles that batch again', async (t) => {
  const clock = createManualClock(0);
  const log = numberedLog(5);
  let saveFailures = 1;
  const checkpoint: Checkpoint = {
    load: log.checkpoint.load,
    async save(position) {
      if (saveFailures-- > 0) throw new Error('checkpoint store unreachable');
      await log.checkpoint.save(position);
    },
  };
  // A store whose batch is one unit with its checkpoint: what the failed unit wrote is undone.
  const kept = new Set<bigint>();
  let staged: bigint[] = [];
  const handled: bigint[][] = [];
  const work = logWork<bigint>({
    checkpoint,
    batchSize: 3,
    read: log.read,
    positionOf: (p) => p,
    async handle(batch) {
      handled.push([...batch]);
      staged.push(...batch);
    },
    async atomically(unit) {
      staged = [];
      const result = await unit();
      for (const item of staged) kept.add(item);
      return result;
    },
  });
  const processor = consumerOf(clock, work);
  t.teardown(() => processor.stop());
  await processor.start();
  t.like(processor.status(), { position: null, failing: { error: 'checkpoint store unreachable' } });
  t.is(log.saved(), null);

  clock.advanceTo(1_000);
  await settle();
  t.deepEqual(handled, [
    [1n, 2n, 3n],
    [1n, 2n, 3n],
    [4n, 5n],
  ]);
  t.deepEqual([...kept], [1n, 2n, 3n, 4n, 5n]);
  t.like(processor.status(), { position: '5', failing: null });
  t.is(log.saved(), 5n);
});

test('owned, a processor runs only where its lease is held, is rebuilt with the fence at takeover, and a stale owner is fenced off', async (t) => {
  const TTL = 3_000;
  const clock = createManualClock(0);
  const store = createMemoryLeaseStore({ clock, ttlMs: TTL });
  const written: string[] = [];
  const instance = (owner: string) => {
    const own = createManualClock(clock.now());
    const ownership = createOwnership({ store, owner, clock: own, log: () => {} });
    const builds: ((write: () => Promise<void>) => Promise<void>)[] = [];
    const processor = createProcessor({
      name: 'sweeper.test',
      clock: own,
      retry: { firstMs: 1_000, maxMs: 1_000 },
      log: () => {},
      ownership: { mode: 'owned', ownership, kind: 'sweeper.test' },
      work: (fence): ProcessorWork => {
        builds.push(fence);
        return {
          async pass() {
            await fence(async () => void written.push(owner));
            return {};
          },
        };
      },
    });
    return { ownership, processor, clock: own, builds };
  };
  const a = instance('a');
  const b = instance('b');
  await a.processor.start();
  await b.processor.start();
  t.true(a.processor.status().running);
  t.false(b.processor.status().running);
  t.deepEqual(written, ['a']);
  await b.processor.poke();
  t.deepEqual(written, ['a'], 'a poke on standby does nothing');

  // a stops renewing; b takes over after the TTL and its work is built with its own fence.
  clock.advanceBy(TTL);
  b.clock.advanceBy(TTL);
  await settle();
  t.true(b.processor.status().running);
  t.is(b.builds.length, 1);
  t.deepEqual(written, ['a', 'b']);
  // a's side effect is refused; its lease is lost and its processor stops.
  await t.throwsAsync(
    a.builds[0]!(async () => void written.push('a late')),
    { instanceOf: LeaseLostError },
  );
  await settle();
  t.false(a.processor.status().running);
  t.deepEqual(written, ['a', 'b']);
  await a.ownership.stop();
  await b.ownership.stop();
  t.false(b.processor.status().running);
});

test('failures are counted per processor, and the failures in a row read at scrape time', async (t) => {
  const metrics = createPrometheusMetrics();
  const clock = createManualClock(0);
  let fail = true;
  const processor = createProcessor({
    name: 'timers',
    clock,
    retry: { firstMs: 1_000, maxMs: 1_000 },
    log: () => {},
    metrics,
    work: {
      async pass() {
        if (fail) throw new Error('down');
        return {};
      },
    },
  });
  t.teardown(() => processor.stop());
  // A second processor on the same registry registers nothing twice.
  const other = createProcessor({
    name: 'sweeper',
    clock,
    retry: { firstMs: 1, maxMs: 1 },
    metrics,
    work: { pass: async () => ({}) },
  });
  await other.start();
  t.teardown(() => other.stop());
  await processor.start();
  clock.advanceBy(1_000);
  await settle();
  let text = await metrics.scrape();
  t.regex(text, /weir_processor_failures_total\{processor="timers"\} 2/);
  t.regex(text, /weir_processor_failing\{processor="timers"\} 2/);
  t.regex(text, /weir_processor_failing\{processor="sweeper"\} 0/);
  fail = false;
  clock.advanceBy(1_000);
  await settle();
  text = await metrics.scrape();
  t.regex(text, /weir_processor_failing\{processor="timers"\} 0/);
  t.regex(text, /weir_processor_failures_total\{processor="timers"\} 2/);
});

test('a polling processor steps every interval after the last step ended, backs off from its first wait when a step fails, and waits for a poke while idle', async (t) => {
  const clock = createManualClock();
  const steps: number[] = [];
  let fail = false;
  let idle = false;
  const processor = createPollingProcessor({
    name: 'poller',
    clock,
    random: () => 0.5,
    intervalMs: () => 100,
    backoff: { firstMs: 50, maxMs: 400 },
    idle: () => idle,
    log: () => {},
    step: async () => {
      steps.push(clock.now() - start);
      if (fail) throw new Error('node down');
    },
  });
  const start = clock.now();
  t.teardown(() => processor.stop());
  await processor.start();
  await settle();
  t.deepEqual(steps, [0]);
  clock.advanceBy(99);
  await settle();
  t.deepEqual(steps, [0], 'not before the interval');
  clock.advanceBy(1);
  await settle();
  t.deepEqual(steps, [0, 100]);
  fail = true;
  clock.advanceBy(100);
  await settle();
  clock.advanceBy(50);
  await settle();
  clock.advanceBy(100);
  await settle();
  t.deepEqual(steps, [0, 100, 200, 250, 350], 'failures wait 50, then 100 ms');
  fail = false;
  idle = true;
  clock.advanceBy(200);
  await settle();
  t.deepEqual(steps, [0, 100, 200, 250, 350, 550]);
  clock.advanceBy(10_000);
  await settle();
  t.is(steps.length, 6, 'idle: no timer set, so no step however long the clock runs');
  await processor.poke();
  await settle();
  t.is(steps.length, 7, 'a poke steps it');
});
