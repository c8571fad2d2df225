import test, { type ExecutionContext } from 'ava';
import { COLLECTIONS, type TimerDoc } from '../projections/collections.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import type { Collection, ReadDocument, ReadStore } from '../read-store/read-store.ts';
import { type Clock, createManualClock } from '../shared/clock.ts';
import type { LogFields } from '../shared/logger.ts';
import {
  createTimerRunner,
  MAX_RECORDED_AT_ONE_SCHEDULING,
  type TimerHandler,
  type TimerRunner,
} from './timer-runner.ts';

const T0 = Date.parse('2026-06-01T00:00:00.000Z');
const SECOND = 1000;

/** Resolves once `count()` reaches `n` (the loop runs on promises, not on time). */
async function reached(count: () => number, n: number): Promise<void> {
  for (let i = 0; i < 1000 && count() < n; i++) await new Promise((resolve) => setTimeout(resolve, 5));
  if (count() < n) throw new Error(`expected ${n} calls, saw ${count()}`);
}

/** The store, recording the `limit` of each read of the due timers (the runner's pass) in `limits`. */
function recordingDueReads(store: ReadStore, limits: (number | undefined)[]): ReadStore {
  return {
    ...store,
    collection<T extends ReadDocument>(name: string): Collection<T> {
      const inner = store.collection<T>(name);
      return {
        ...inner,
        find(filter, options) {
          const fireAt = filter.fireAt;
          if (typeof fireAt === 'object' && fireAt !== null && '$lte' in fireAt) limits.push(options?.limit);
          return inner.find(filter, options);
        },
      };
    },
  };
}

/** A runner logging nothing, stopped after the test; told of changed timers only by `changed` (a deleted timer never pokes). */
function startRunner(
  t: ExecutionContext,
  deps: { clock: Clock; readStore: ReadStore; handlers: Record<string, TimerHandler> },
): { runner: TimerRunner; changed: (...ids: string[]) => void } {
  let told: ((ids: ReadonlySet<string>) => void) | null = null;
  const projections = {
    waitFor: async () => {},
    onDocumentsChanged: (_collection: string, listener: (ids: ReadonlySet<string>) => void) => {
      told = listener;
      return () => {};
    },
  };
  const runner = createTimerRunner({ ...deps, projections, log: () => {} });
  runner.start();
  t.teardown(() => runner.stop());
  return { runner, changed: (...ids) => told?.(new Set(ids)) };
}

/** A handler whose command completes the record: its timer is removed; `seen` gets its id. */
const completing =
  (store: ReadStore, seen: string[]): TimerHandler =>
  async (timer) => {
    seen.push(timer._id);
    await store.collection<TimerDoc>(COLLECTIONS.timers).delete(timer._id);
    return { position: 1n };
  };

/** `count` due timers of `kind`, a millisecond apart, the last at T0. */
async function putDue(store: ReadStore, kind: string, count: number): Promise<void> {
  const timers = store.collection<TimerDoc>(COLLECTIONS.timers);
  for (let i = 0; i < count; i++)
    await timers.put({
      _id: `${kind}:${i}`,
      kind,
      recordId: String(i),
      organizationId: 'org',
      environment: 'test',
      fireAt: T0 - count + 1 + i,
    });
}

test('a timer whose handler fails is retried on the clock, backing off, and does not hold up the others', async (t) => {
  const clock = createManualClock(T0);
  const store = createEmbeddedReadStore({});
  const timers = store.collection<TimerDoc>(COLLECTIONS.timers);
  const base = { organizationId: 'org', environment: 'test', fireAt: T0 - SECOND };
  await timers.put({ _id: 'boom:1', kind: 'boom', recordId: '1', ...base });
  await timers.put({ _id: 'ok:2', kind: 'ok', recordId: '2', ...base, fireAt: T0 });
  const calls: Record<string, number[]> = { boom: [], ok: [] };
  const handlers: Record<string, TimerHandler> = {
    async boom(timer) {
      calls.boom!.push(clock.now());
      if (calls.boom!.length < 3) throw new Error('store unavailable');
      await timers.delete(timer._id);
      return { position: 1n };
    },
    async ok(timer) {
      calls.ok!.push(clock.now());
      await timers.delete(timer._id);
      return { position: 2n };
    },
  };
  const lines: string[] = [];
  const runner = createTimerRunner({
    clock,
    readStore: store,
    projections: { waitFor: async () => {}, onDocumentsChanged: () => () => {} },
    handlers,
    // Only what went wrong: each timer's own `timer.fired` line is not what these tests look at.
    log: (line, fields) => (fields?.event === 'timer.fired' ? undefined : lines.push(line)),
  });
  runner.start();
  t.teardown(() => runner.stop());

  await reached(() => calls.ok!.length, 1);
  t.deepEqual(calls.boom, [T0]);
  t.deepEqual(calls.ok, [T0], 'the timer after the failing one still fired');
  t.regex(lines[0]!, /boom boom:1 failed \(attempt 1\); retrying at 2026-06-01T00:01:00.000Z: store unavailable/);
  t.deepEqual(runner.status(), { failing: [{ id: 'boom:1', kind: 'boom', failures: 1, since: T0 }] });

  clock.advanceBy(59 * SECOND);
  clock.advanceBy(1 * SECOND);
  await reached(() => calls.boom!.length, 2);
  t.deepEqual(calls.boom, [T0, T0 + 60 * SECOND]);
  await reached(() => runner.status().failing[0]?.failures ?? 0, 2);
  t.deepEqual(
    runner.status(),
    { failing: [{ id: 'boom:1', kind: 'boom', failures: 2, since: T0 }] },
    'failing since its first failure',
  );
  clock.advanceBy(119 * SECOND);
  t.is(calls.boom!.length, 2, 'the second retry waits twice as long');
  clock.advanceBy(1 * SECOND);
  await reached(() => calls.boom!.length, 3);
  t.deepEqual(await timers.find({}), []);
  await reached(() => (runner.status().failing.length === 0 ? 1 : 0), 1);
  t.deepEqual(runner.status(), { failing: [] });
});

test('a timer whose command changed nothing is not fired again until it is rescheduled', async (t) => {
  const clock = createManualClock(T0);
  const store = createEmbeddedReadStore({});
  const timers = store.collection<TimerDoc>(COLLECTIONS.timers);
  await timers.put({
    _id: 'noop:1',
    kind: 'noop',
    recordId: '1',
    organizationId: 'org',
    environment: 'test',
    fireAt: T0,
    version: 1,
  });
  let fired = 0;
  const { changed } = startRunner(t, {
    clock,
    readStore: store,
    handlers: {
      noop: async () => {
        fired += 1;
        return { position: null };
      },
    },
  });
  await reached(() => fired, 1);
  clock.advanceBy(SECOND);
  await new Promise((resolve) => setImmediate(resolve));
  t.is(fired, 1);
  // Same fire time, new version (the record changed): looked at again.
  await timers.put({
    _id: 'noop:1',
    kind: 'noop',
    recordId: '1',
    organizationId: 'org',
    environment: 'test',
    fireAt: T0,
    version: 2,
  });
  changed('noop:1');
  await reached(() => fired, 2);
  t.pass();
});

test('a failing timer that goes away before its retry is forgotten: the loop does not keep looking at a retry time in the past', async (t) => {
  const manual = createManualClock(T0);
  let scheduled = 0;
  // Counts the loop's wake-ups, and stops scheduling after 50 so that a spinning loop ends the test instead of hanging it.
  const clock = {
    ...manual,
    schedule: (at: number, fire: () => void) => (++scheduled > 50 ? () => {} : manual.schedule(at, fire)),
  };
  const store = createEmbeddedReadStore({});
  const timers = store.collection<TimerDoc>(COLLECTIONS.timers);
  await timers.put({
    _id: 'boom:1',
    kind: 'boom',
    recordId: '1',
    organizationId: 'org',
    environment: 'test',
    fireAt: T0,
  });
  let calls = 0;
  const runner = createTimerRunner({
    clock,
    readStore: store,
    projections: { waitFor: async () => {}, onDocumentsChanged: () => () => {} },
    handlers: {
      boom: async () => {
        calls += 1;
        throw new Error('store unavailable');
      },
    },
    log: () => {},
  });
  runner.start();
  t.teardown(() => runner.stop());
  await reached(() => calls, 1);
  // The record completed meanwhile: its timer is removed.
  await timers.delete('boom:1');
  const before = scheduled;
  manual.advanceBy(61 * SECOND);
  for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
  t.is(calls, 1);
  t.true(scheduled - before <= 2, `the loop woke ${scheduled - before} times`);
});

test('a timer that falls due while a pass fires another (the clock moved on meanwhile) fires next, without a poke', async (t) => {
  const clock = createManualClock(T0);
  const store = createEmbeddedReadStore({});
  const timers = store.collection<TimerDoc>(COLLECTIONS.timers);
  const base = { organizationId: 'org', environment: 'test' };
  const DAY = 24 * 60 * 60 * SECOND;
  await timers.put({ _id: 'first:1', kind: 'first', recordId: '1', ...base, fireAt: T0 });
  await timers.put({ _id: 'next:2', kind: 'next', recordId: '2', ...base, fireAt: T0 + DAY });
  const fired: string[] = [];
  const handlers: Record<string, TimerHandler> = {
    async first(timer) {
      fired.push(timer._id);
      // The clock reaches the next timer while this one is being fired (a long pass, a test's clock
      // jump): the loop has no wake-up armed then, so only the pass's own next look can see it.
      clock.set(T0 + DAY);
      await timers.delete(timer._id);
      return { position: 1n };
    },
    async next(timer) {
      fired.push(timer._id);
      await timers.delete(timer._id);
      return { position: 2n };
    },
  };
  const runner = createTimerRunner({
    clock,
    readStore: store,
    // No change of the timers is notified: the loop has to find the next one on its own.
    projections: { waitFor: async () => {}, onDocumentsChanged: () => () => {} },
    handlers,
    log: () => {},
  });
  runner.start();
  t.teardown(() => runner.stop());
  await reached(() => fired.length, 2);
  t.deepEqual(fired, ['first:1', 'next:2']);
});

test('retryWaiting while a pass is putting a timer off: the timer is tried again at once, not after NOT_YET_RETRY_MS', async (t) => {
  const clock = createManualClock(T0);
  const store = createEmbeddedReadStore({});
  const timers = store.collection<TimerDoc>(COLLECTIONS.timers);
  await timers.put({
    _id: 'wait:1',
    kind: 'wait',
    recordId: '1',
    organizationId: 'org',
    environment: 'test',
    fireAt: T0,
  });
  let calls = 0;
  let runner: TimerRunner | null = null;
  const handlers: Record<string, TimerHandler> = {
    async wait(timer) {
      calls += 1;
      if (calls > 1) {
        await timers.delete(timer._id);
        return { position: 1n };
      }
      // What the timer waits for changes while this pass decides to put it off.
      runner!.retryWaiting();
      return { notYet: true };
    },
  };
  const lines: string[] = [];
  runner = createTimerRunner({
    clock,
    readStore: store,
    projections: { waitFor: async () => {}, onDocumentsChanged: () => () => {} },
    handlers,
    // Only what went wrong: each timer's own `timer.fired` line is not what these tests look at.
    log: (line, fields) => (fields?.event === 'timer.fired' ? undefined : lines.push(line)),
  });
  runner.start();
  t.teardown(() => runner!.stop());
  await reached(() => calls, 2);
  t.is(clock.now(), T0);
  t.deepEqual(lines, []);
});

test('each timer fired is one structured line: its kind, id, tenant and what came of it (put off: at debug)', async (t) => {
  const clock = createManualClock(T0);
  const store = createEmbeddedReadStore({});
  const timers = store.collection<TimerDoc>(COLLECTIONS.timers);
  const base = { organizationId: 'org', environment: 'test', fireAt: T0 };
  await timers.put({ _id: 'acted:1', kind: 'acted', recordId: '1', ...base });
  await timers.put({ _id: 'idle:2', kind: 'idle', recordId: '2', ...base });
  await timers.put({ _id: 'later:3', kind: 'later', recordId: '3', ...base });
  const handlers: Record<string, TimerHandler> = {
    async acted(timer) {
      await timers.delete(timer._id);
      return { position: 1n };
    },
    idle: async () => ({ position: null }),
    later: async () => ({ notYet: true }),
  };
  const fired: LogFields[] = [];
  const runner = createTimerRunner({
    clock,
    readStore: store,
    projections: { waitFor: async () => {}, onDocumentsChanged: () => () => {} },
    handlers,
    log: (_line, fields) => (fields?.event === 'timer.fired' ? fired.push(fields) : undefined),
  });
  runner.start();
  t.teardown(() => runner.stop());
  await reached(() => fired.length, 3);
  const common = {
    event: 'timer.fired',
    organizationId: 'org',
    environment: 'test',
    fireAt: '2026-06-01T00:00:00.000Z',
  };
  t.deepEqual(
    fired.sort((a, b) => String(a.timerId).localeCompare(String(b.timerId))),
    [
      { ...common, level: 'info', kind: 'acted', timerId: 'acted:1', outcome: 'recorded' },
      { ...common, level: 'info', kind: 'idle', timerId: 'idle:2', outcome: 'no_change' },
      { ...common, level: 'debug', kind: 'later', timerId: 'later:3', outcome: 'not_yet' },
    ],
  );
});

test('more timers due than one read holds (510): the rest fire in the passes right after, not when something pokes', async (t) => {
  const clock = createManualClock(T0);
  const store = createEmbeddedReadStore({});
  const timers = store.collection<TimerDoc>(COLLECTIONS.timers);
  await putDue(store, 'act', 510);
  const fired: string[] = [];
  startRunner(t, { clock, readStore: store, handlers: { act: completing(store, fired) } });
  await reached(() => fired.length, 510);
  t.deepEqual(await timers.find({}), []);
});

test('more timers due than one read holds, all spent or put off: each is looked at once, then the loop waits (no spin)', async (t) => {
  const clock = createManualClock(T0);
  const limits: (number | undefined)[] = [];
  const store = createEmbeddedReadStore({});
  await putDue(store, 'idle', 300);
  await putDue(store, 'later', 210);
  const calls = { idle: 0, later: 0 };
  startRunner(t, {
    clock,
    readStore: recordingDueReads(store, limits),
    handlers: {
      async idle() {
        calls.idle += 1;
        return { position: null };
      },
      async later() {
        calls.later += 1;
        return { notYet: true };
      },
    },
  });
  await reached(() => calls.idle + calls.later, 510);
  for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
  t.deepEqual(calls, { idle: 300, later: 210 }, 'each looked at once');
  // A batch, then a read on top of the 500 now skipped that is not full: the loop waits for the retry.
  t.deepEqual(limits, [500, 1000]);
  clock.advanceBy(60 * SECOND);
  await reached(() => calls.later, 420);
  t.is(calls.idle, 300, 'spent timers are not fired again');
});

test('spent timers that are gone are forgotten: the read limit comes back to a batch', async (t) => {
  const clock = createManualClock(T0);
  const limits: (number | undefined)[] = [];
  const store = createEmbeddedReadStore({});
  const timers = store.collection<TimerDoc>(COLLECTIONS.timers);
  await putDue(store, 'idle', 3);
  const base = { kind: 'act', organizationId: 'org', environment: 'test' };
  await timers.put({ _id: 'act:1', recordId: '1', ...base, fireAt: T0 + SECOND });
  await timers.put({ _id: 'act:2', recordId: '2', ...base, fireAt: T0 + 2 * SECOND });
  let idle = 0;
  const acted: string[] = [];
  startRunner(t, {
    clock,
    readStore: recordingDueReads(store, limits),
    handlers: {
      async idle() {
        idle += 1;
        return { position: null };
      },
      act: completing(store, acted),
    },
  });
  await reached(() => idle, 3);
  // Their records went on (or were deleted): the spent timers are removed.
  for (let i = 0; i < 3; i++) await timers.delete(`idle:${i}`);
  clock.advanceBy(SECOND);
  await reached(() => acted.length, 1);
  clock.advanceBy(SECOND);
  await reached(() => acted.length, 2);
  // The second pass's read still makes room for the three spent (gone: it forgets them); the third's does not.
  t.deepEqual(limits, [500, 503, 500]);
});

test("a timer set while a pass runs, due by that pass's now (its read came before), fires: the change pokes", async (t) => {
  const clock = createManualClock(T0);
  const store = createEmbeddedReadStore({});
  const timers = store.collection<TimerDoc>(COLLECTIONS.timers);
  const base = { organizationId: 'org', environment: 'test' };
  const DAY = 24 * 60 * 60 * SECOND;
  await timers.put({ _id: 'renew:1', kind: 'renew', recordId: '1', ...base, fireAt: T0 + SECOND });
  const fired: string[] = [];
  const { changed } = startRunner(t, {
    clock,
    readStore: store,
    handlers: {
      // Its command sets another timer, due between the loop's planned look and this pass's now
      // (the clock jumped a day past it, as a test's clock does, or a stalled process's).
      async renew(timer) {
        fired.push(timer._id);
        await timers.put({ _id: 'remind:2', kind: 'remind', recordId: '2', ...base, fireAt: T0 + DAY / 2 });
        changed('remind:2');
        await timers.delete(timer._id);
        return { position: 1n };
      },
      remind: completing(store, fired),
    },
  });
  clock.set(T0 + DAY);
  await reached(() => fired.length, 2);
  t.deepEqual(fired, ['renew:1', 'remind:2']);
});

test('a command that records events but leaves its timer due at the same scheduling stops being fired on every change: it backs off as a failure', async (t) => {
  const clock = createManualClock(T0);
  const store = createEmbeddedReadStore({});
  const timers = store.collection<TimerDoc>(COLLECTIONS.timers);
  const timer = {
    _id: 'stuck:1',
    kind: 'stuck',
    recordId: '1',
    organizationId: 'org',
    environment: 'test',
    fireAt: T0,
  };
  await timers.put(timer);
  let fired = 0;
  const { runner, changed } = startRunner(t, {
    clock,
    readStore: store,
    handlers: {
      // A buggy handler: its events rewrite the timer's document unchanged, which tells the runner it changed.
      async stuck() {
        fired += 1;
        await timers.put(timer);
        changed(timer._id);
        return { position: BigInt(fired) };
      },
    },
  });
  await reached(() => runner.status().failing.length, 1);
  t.is(fired, MAX_RECORDED_AT_ONE_SCHEDULING);
  t.like(runner.status().failing[0], { id: 'stuck:1', kind: 'stuck', failures: 1 });
  // Rescheduled (its record changed for real): fired again.
  await timers.put({ ...timer, version: 2 });
  changed(timer._id);
  await reached(() => fired, MAX_RECORDED_AT_ONE_SCHEDULING + 1);
  t.pass();
});
