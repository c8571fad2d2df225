import test from 'ava';
import { createManualClock } from '../shared/clock.ts';
import { createLease, LeaseLostError } from './lease.ts';
import { createMemoryLeaseStore } from './lease-store.ts';

const TTL = 3_000;

/** One store on the shared clock; each instance steps on a clock of its own, so a "dead" one is simply never advanced. */
function setup() {
  const clock = createManualClock();
  const store = createMemoryLeaseStore({ clock, ttlMs: TTL });
  const moves: string[] = [];
  const instance = (owner: string) => {
    const own = createManualClock(clock.now());
    const lease = createLease({
      store,
      key: 'work.sweeper',
      owner,
      clock: own,
      onAcquired: () => moves.push(`${owner} acquired`),
      onLost: () => moves.push(`${owner} lost`),
    });
    return { lease, clock: own };
  };
  return { clock, store, moves, instance };
}

test('the first to step acquires; the other stands by while the owner renews', async (t) => {
  const { clock, moves, instance } = setup();
  const a = instance('a');
  const b = instance('b');
  await a.lease.start();
  await b.lease.start();
  t.true(a.lease.held());
  t.false(b.lease.held());
  // Several TTLs pass, the owner renewing every third of one: nobody else gets it.
  for (let i = 0; i < 9; i++) {
    clock.advanceBy(TTL / 3);
    await a.lease.tick();
    await b.lease.tick();
  }
  t.true(a.lease.held());
  t.false(b.lease.held());
  t.deepEqual(moves, ['a acquired']);
});

test('an owner that stops renewing (killed) loses the lease after its TTL, and another takes it over', async (t) => {
  const { clock, moves, instance } = setup();
  const a = instance('a');
  const b = instance('b');
  await a.lease.start();
  await b.lease.start();
  // a is dead from here on: it takes no more steps.
  clock.advanceBy(TTL - 1);
  await b.lease.tick();
  t.false(b.lease.held(), 'not before the TTL has passed since the last renewal');
  clock.advanceBy(1);
  await b.lease.tick();
  t.true(b.lease.held(), 'taken over once the entry expired');
  t.deepEqual(moves, ['a acquired', 'b acquired']);
});

test('a stale owner is fenced off: its writes are refused and it learns it lost the lease', async (t) => {
  const { clock, store, moves, instance } = setup();
  const a = instance('a');
  const b = instance('b');
  await a.lease.start();
  await b.lease.start();
  const staleRevision = a.lease.revision();
  clock.advanceBy(TTL); // a paused (a long GC, a frozen VM) past its TTL
  await b.lease.tick();
  t.true(b.lease.held());
  // a wakes up still believing it owns the work, and tries a side effect.
  t.true(a.lease.held());
  let written = 0;
  const refused = await t.throwsAsync(
    a.lease.fence(async () => {
      written += 1;
    }),
    { instanceOf: LeaseLostError },
  );
  t.regex(refused?.message ?? '', /work\.sweeper/);
  t.is(written, 0, 'the write never ran');
  t.false(a.lease.held());
  t.true(store.refused() >= 1);
  t.deepEqual(moves, ['a acquired', 'b acquired', 'a lost']);
  // Its old revision is no token any more; the new owner's writes go through.
  t.is(await store.write('work.sweeper', { owner: 'a', released: false }, staleRevision!), null);
  t.is(await b.lease.fence(async () => 'swept'), 'swept');
});

test('a renewal refused at its scheduled step makes the owner give up at once', async (t) => {
  const { clock, moves, instance } = setup();
  const a = instance('a');
  const b = instance('b');
  await a.lease.start();
  clock.advanceBy(TTL);
  await b.lease.start();
  t.true(b.lease.held());
  a.clock.advanceBy(TTL); // a's schedule fires its renewal
  await a.lease.tick();
  t.false(a.lease.held());
  t.deepEqual(moves, ['a acquired', 'b acquired', 'a lost']);
});

test('releasing hands the lease over at once, without waiting for the TTL', async (t) => {
  const { moves, instance } = setup();
  const a = instance('a');
  const b = instance('b');
  await a.lease.start();
  await b.lease.start();
  t.false(b.lease.held());
  await a.lease.stop();
  await b.lease.tick();
  t.true(b.lease.held());
  t.deepEqual(moves, ['a acquired', 'b acquired']);
});

test('an owner whose store does not answer gives the lease up once a TTL passed since its last renewal', async (t) => {
  const clock = createManualClock();
  const inner = createMemoryLeaseStore({ clock, ttlMs: TTL });
  let down = false;
  const store = {
    ...inner,
    write: (...args: Parameters<typeof inner.write>) =>
      down ? Promise.reject(new Error('connection refused')) : inner.write(...args),
  };
  const lost: string[] = [];
  const lease = createLease({ store, key: 'work.timers', owner: 'a', clock, onLost: (reason) => lost.push(reason) });
  await lease.start();
  down = true;
  clock.advanceBy(TTL - 1);
  await lease.tick();
  t.true(lease.held(), 'a failed renewal within the TTL keeps the lease');
  await t.throwsAsync(
    lease.fence(async () => 1),
    { instanceOf: LeaseLostError },
  );
  clock.advanceBy(1);
  await lease.tick();
  t.false(lease.held());
  t.is(lost.length, 1);
  t.regex(lost[0]!, /TTL/);
});
