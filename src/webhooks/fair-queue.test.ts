import test from 'ava';
import { createFairQueue, type FairQueueItem } from './fair-queue.ts';

const item = (id: string, tenant: string, endpoint: string, dueAt = 0): FairQueueItem => ({
  id,
  tenant,
  endpoint,
  dueAt,
});

test('items come out in due order; one not due yet waits, and nextDueAt says when', (t) => {
  const queue = createFairQueue({ total: 10, perTenant: 10, perEndpoint: 10 });
  queue.add(item('late', 'a', 'e1', 300));
  queue.add(item('early', 'a', 'e1', 100));
  queue.add(item('middle', 'a', 'e1', 200));
  t.deepEqual(
    queue.take(250).map((i) => i.id),
    ['early', 'middle'],
  );
  t.is(queue.nextDueAt(), 300);
  t.deepEqual(queue.take(299), []);
  t.deepEqual(
    queue.take(300).map((i) => i.id),
    ['late'],
  );
  t.is(queue.nextDueAt(), null);
});

test('a slow endpoint uses at most its share: the others of its tenant and other tenants go on', (t) => {
  const queue = createFairQueue({ total: 100, perTenant: 6, perEndpoint: 2 });
  for (let i = 0; i < 20; i++) queue.add(item(`slow-${i}`, 'a', 'slow'));
  queue.add(item('a-fast', 'a', 'fast'));
  queue.add(item('b-1', 'b', 'b-endpoint'));
  const started = queue.take(0).map((i) => i.id);
  t.deepEqual(started.filter((id) => id.startsWith('slow')).length, 2);
  t.true(started.includes('a-fast'));
  t.true(started.includes('b-1'));
  // Still hanging: nothing more of the slow endpoint starts, and it does not block a new item elsewhere.
  t.deepEqual(queue.take(0), []);
  queue.add(item('b-2', 'b', 'b-endpoint'));
  t.deepEqual(
    queue.take(0).map((i) => i.id),
    ['b-2'],
  );
  queue.finish('slow-0');
  t.deepEqual(
    queue.take(0).map((i) => i.id),
    ['slow-2'],
  );
});

test('tenants take turns: a tenant with a long backlog gets one start per round while others wait', (t) => {
  const queue = createFairQueue({ total: 4, perTenant: 4, perEndpoint: 4 });
  for (let i = 0; i < 10; i++) queue.add(item(`a-${i}`, 'a', 'a1'));
  queue.add(item('b-0', 'b', 'b1'));
  queue.add(item('c-0', 'c', 'c1'));
  const first = queue.take(0).map((i) => i.id);
  t.is(first.length, 4);
  t.true(first.includes('b-0') && first.includes('c-0'));
  t.is(queue.nextDueAt(), null, 'all four slots busy: the next start waits for a finish');
  queue.finish(first[0]!);
  t.is(queue.take(0).length, 1);
});

test('within a tenant, endpoints take turns', (t) => {
  const queue = createFairQueue({ total: 100, perTenant: 100, perEndpoint: 100 });
  for (let i = 0; i < 3; i++) queue.add(item(`x-${i}`, 'a', 'x', i));
  for (let i = 0; i < 3; i++) queue.add(item(`y-${i}`, 'a', 'y', 10 + i));
  t.deepEqual(
    queue.take(100).map((i) => i.id),
    ['x-0', 'y-0', 'x-1', 'y-1', 'x-2', 'y-2'],
  );
});

test('add moves a queued item, remove forgets it, and an item in flight is not queued twice', (t) => {
  const queue = createFairQueue({ total: 10, perTenant: 10, perEndpoint: 10 });
  queue.add(item('one', 'a', 'e', 100));
  queue.add(item('one', 'a', 'e', 500));
  t.is(queue.nextDueAt(), 500);
  queue.add(item('two', 'a', 'e', 50));
  queue.remove('two');
  t.deepEqual(queue.take(400), []);
  t.deepEqual(
    queue.take(500).map((i) => i.id),
    ['one'],
  );
  t.true(queue.isInFlight('one'));
  queue.add(item('one', 'a', 'e', 0));
  t.deepEqual(queue.size(), { queued: 0, inFlight: 1 });
  queue.finish('one');
  t.deepEqual(queue.size(), { queued: 0, inFlight: 0 });
  queue.add(item('one', 'a', 'e', 0));
  t.deepEqual(
    queue.take(0).map((i) => i.id),
    ['one'],
  );
});

test('dueNow brings the queued items of one endpoint forward (those it picks), and only those', (t) => {
  const queue = createFairQueue({ total: 10, perTenant: 10, perEndpoint: 10 });
  queue.add(item('gone-1', 'a', 'gone', 10_000));
  queue.add(item('gone-2', 'a', 'gone', 20_000));
  queue.add(item('kept', 'a', 'kept', 10_000));
  queue.dueNow('gone', 5);
  t.deepEqual(
    queue
      .take(5)
      .map((i) => i.id)
      .sort(),
    ['gone-1', 'gone-2'],
  );
  t.is(queue.nextDueAt(), 10_000);
});
