import test from 'ava';
import { createManualClock } from '../shared/clock.ts';
import { createMemoryLeaseStore } from './lease-store.ts';
import { LeaseLostError } from './lease.ts';
import { createOwnership, type Fence } from './ownership.ts';

const TTL = 3_000;

function setup() {
  const clock = createManualClock();
  const store = createMemoryLeaseStore({ clock, ttlMs: TTL });
  const events: string[] = [];
  const lines: string[] = [];
  const instance = (owner: string) => {
    const own = createManualClock(clock.now());
    const ownership = createOwnership({
      store,
      owner,
      clock: own,
      log: (line) => lines.push(line),
    });
    let fence: Fence | null = null;
    const own_ = () =>
      ownership.own('webhooks', async (f) => {
        fence = f;
        events.push(`${owner} started`);
        return { stop: async () => void events.push(`${owner} stopped`) };
      });
    return { ownership, clock: own, own: own_, fence: () => fence! };
  };
  return { clock, events, lines, instance };
}

test('work runs only in the instance holding its lease, moves when its owner dies, and stops in the stale one', async (t) => {
  const { clock, events, lines, instance } = setup();
  const a = instance('a');
  const b = instance('b');
  const aWork = await a.own();
  const bWork = await b.own();
  t.true(aWork.running());
  t.false(bWork.running());
  t.deepEqual(events, ['a started']);
  // a stops stepping (killed, or frozen); b's next step after the TTL takes the work over.
  clock.advanceBy(TTL);
  b.clock.advanceBy(TTL);
  await new Promise((resolve) => setImmediate(resolve));
  t.true(bWork.running());
  // a wakes: its fenced side effect is refused, and its work stops.
  await t.throwsAsync(
    a.fence()(async () => 'sent'),
    { instanceOf: LeaseLostError },
  );
  await new Promise((resolve) => setImmediate(resolve));
  t.false(aWork.running());
  t.deepEqual(events, ['a started', 'b started', 'a stopped']);
  t.true(lines.some((line) => /webhooks: lost by a/.test(line)));
  t.true(lines.some((line) => /webhooks: acquired by b/.test(line)));
  await b.ownership.stop();
  t.deepEqual(events, ['a started', 'b started', 'a stopped', 'b stopped']);
});

test('stopping an instance stops its work and hands it over at once', async (t) => {
  const { events, instance } = setup();
  const a = instance('a');
  const b = instance('b');
  await a.own();
  const bWork = await b.own();
  await a.ownership.stop();
  b.clock.advanceBy(TTL / 3); // b's next scheduled step, well within the TTL
  await new Promise((resolve) => setImmediate(resolve));
  t.true(bWork.running());
  t.deepEqual(events, ['a started', 'a stopped', 'b started']);
});

test('without a lease store (one process) every work runs and nothing is fenced', async (t) => {
  const ownership = createOwnership({ store: null, owner: 'solo', clock: createManualClock(), log: () => {} });
  let fence: Fence | null = null;
  const work = await ownership.own('timers', async (f) => {
    fence = f;
    return { stop: async () => {} };
  });
  t.true(work.running());
  t.is(await fence!(async () => 'fired'), 'fired');
  t.deepEqual(ownership.status(), [{ kind: 'timers', running: true }]);
});
