import test from 'ava';
import { createSlots, slotsFromEnv } from './child-weir-slots.ts';

/** Lets every settled promise's callbacks run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** A piece of work that ends (or throws) only when told to. */
const gated = () => {
  let open!: () => void;
  let fail!: (error: Error) => void;
  const gate = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { gate, open, fail };
};

test('never more than N held: the rest wait and get a slot in the order they asked, as each is given back', async (t) => {
  const slots = createSlots(2);
  const started: number[] = [];
  let running = 0;
  let most = 0;
  const gates = [0, 1, 2, 3, 4].map(() => gated());
  const runs = gates.map((each, index) =>
    slots.run(async () => {
      started.push(index);
      running++;
      most = Math.max(most, running);
      await each.gate;
      running--;
      return index;
    }),
  );
  await settle();
  t.deepEqual(started, [0, 1]);
  t.is(slots.held(), 2);
  t.is(slots.waiting(), 3);
  gates[1]!.open();
  await settle();
  t.deepEqual(started, [0, 1, 2], 'the first waiting, not a later one');
  gates[0]!.open();
  gates[2]!.open();
  await settle();
  t.deepEqual(started, [0, 1, 2, 3, 4]);
  gates[3]!.open();
  gates[4]!.open();
  t.deepEqual(await Promise.all(runs), [0, 1, 2, 3, 4]);
  t.is(most, 2);
  t.is(slots.held(), 0);
  t.is(slots.waiting(), 0);
});

test('work that throws gives its slot back to the next in line, and its error to its caller', async (t) => {
  const slots = createSlots(1);
  const failing = gated();
  const first = slots.run(() => failing.gate);
  let secondRan = false;
  const second = slots.run(async () => {
    secondRan = true;
  });
  await settle();
  t.false(secondRan);
  failing.fail(new Error('the child timed out'));
  await t.throwsAsync(first, { message: 'the child timed out' });
  await second;
  t.true(secondRan);
  t.is(slots.held(), 0);
});

test('a slot given back twice frees one slot only', async (t) => {
  const slots = createSlots(1);
  const release = await slots.acquire();
  const waiter = slots.acquire();
  release();
  release();
  const next = await waiter;
  t.is(slots.held(), 1);
  let third = false;
  void slots.acquire().then(() => {
    third = true;
  });
  await settle();
  t.false(third, 'the double release did not free a second slot');
  next();
  await settle();
  t.true(third);
});

test('WEIR_TEST_CHILD_SLOTS sets the count; unset or not a positive integer, 2', (t) => {
  t.is(slotsFromEnv(undefined), 2);
  t.is(slotsFromEnv('5'), 5);
  t.is(slotsFromEnv('1'), 1);
  for (const bad of ['', '0', '-2', '1.5', 'many']) t.is(slotsFromEnv(bad), 2, bad);
  t.throws(() => createSlots(0));
});
