import test from 'ava';
import { createManualClock } from './clock.ts';
import { createDueWorkLoop } from './due-work-loop.ts';

/** Let the loop's pending promises run (no time passes on the clock). */
const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
};

test('a failing run is retried on the clock, the wait doubling per failure in a row and reset by a success', async (t) => {
  const clock = createManualClock(0);
  const runs: number[] = [];
  const lines: string[] = [];
  let failing = 4;
  const loop = createDueWorkLoop({
    name: 'work',
    clock,
    log: (line) => lines.push(line),
    async runDue(now) {
      runs.push(now);
      if (failing > 0) {
        failing -= 1;
        throw new Error('store unreachable');
      }
    },
    async nextDue() {
      return null;
    },
  });
  t.teardown(() => loop.stop());
  loop.poke();
  await settle();
  t.deepEqual(runs, [0]);

  // Waits of 1 s, 2 s, 4 s, 8 s: never a run before its time, one at its time.
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
  t.is(lines.length, 4);
  t.regex(lines[3]!, /^\[work\] failed \(4 time\(s\) in a row\); retrying in 8000 ms: Error: store unreachable/);

  // The fifth run succeeded: the next failure waits a second again.
  failing = 1;
  loop.poke();
  await settle();
  clock.advanceTo(at + 999);
  await settle();
  t.is(runs.length, 6);
  clock.advanceTo(at + 1_000);
  await settle();
  t.is(runs.length, 7);
  t.regex(lines.at(-1)!, /\(1 time\(s\) in a row\); retrying in 1000 ms/);
});

test('the wait stops growing at five minutes', async (t) => {
  const clock = createManualClock(0);
  const waits: number[] = [];
  const loop = createDueWorkLoop({
    name: 'work',
    clock,
    log: (line) => waits.push(Number(/retrying in (\d+) ms/.exec(line)?.[1])),
    async runDue() {
      throw new Error('down');
    },
    async nextDue() {
      return null;
    },
  });
  t.teardown(() => loop.stop());
  loop.poke();
  await settle();
  for (let i = 0; i < 12; i++) {
    clock.advanceTo(clock.now() + waits.at(-1)!);
    await settle();
  }
  t.deepEqual(
    waits,
    [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 128_000, 256_000, 300_000, 300_000, 300_000, 300_000],
  );
});

test('work that stays due (a handler that records nothing) never starves the event loop: timers and I/O still run between runs', async (t) => {
  const clock = createManualClock(0);
  let runs = 0;
  const loop = createDueWorkLoop({
    name: 'stuck',
    clock,
    // Handles nothing, so the same work is due again at once, forever.
    async runDue() {
      runs += 1;
    },
    async nextDue() {
      return runs < 50_000 ? clock.now() : null;
    },
  });
  t.teardown(() => loop.stop());
  const timerRanAfterRuns = new Promise<number>((resolve) => setTimeout(() => resolve(runs), 0));
  loop.poke();
  // Before the fix every run followed the last in a microtask: the timer fired after all 50,000.
  t.true((await timerRanAfterRuns) < 100, 'a timer set before the loop started ran within its first runs');
});
