import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import Database from 'better-sqlite3';
import type { Bus, BusMessage } from './bus.ts';
import { BusArgumentError, BusClosedError } from './errors.ts';
import { createInProcessBus } from './in-process-bus.ts';
import { createMemoryBusStore, openSqliteBusStore, type InProcessBusStore } from './in-process-bus-store.ts';

const text = (message: BusMessage): string => new TextDecoder().decode(message.data);
const bytes = (value: string): Uint8Array => new TextEncoder().encode(value);

async function waitUntil(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

test('the duplicate window follows the injected clock', async (t) => {
  let now = 1_000_000;
  const bus = createInProcessBus({ duplicateWindowMs: 60_000, now: () => now });
  const received: string[] = [];
  await bus.consume({ durableName: 'dedupe', filterSubject: 'chain.>' }, async (m) => {
    received.push(text(m));
  });
  await bus.publish('chain.eth.transfer', bytes('a'), { messageId: 'id-1' });
  now += 59_999;
  await bus.publish('chain.eth.transfer', bytes('b'), { messageId: 'id-1' });
  now += 1;
  await bus.publish('chain.eth.transfer', bytes('c'), { messageId: 'id-1' });
  await bus.publish('chain.eth.transfer', bytes('d'), { messageId: 'id-1' });
  await waitUntil(() => received.length >= 2);
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.deepEqual(received, ['a', 'c']);
  await bus.close();
});

test('redelivery waits the configured, doubling, capped delay', async (t) => {
  const bus = createInProcessBus({ redeliveryDelayMs: 40, maxRedeliveryDelayMs: 60 });
  const deliveredAt: number[] = [];
  await bus.publish('chain.eth.transfer', bytes('x'));
  await bus.consume({ durableName: 'slow', filterSubject: 'chain.>' }, async (m) => {
    deliveredAt.push(Date.now());
    if (m.deliveryCount < 4) throw new Error('not yet');
  });
  await waitUntil(() => deliveredAt.length >= 4);
  const gaps = deliveredAt.slice(1).map((at, index) => at - (deliveredAt[index] ?? at));
  t.true((gaps[0] ?? 0) >= 35, `first gap ${gaps[0]}`);
  t.true((gaps[1] ?? 0) >= 55, `second gap ${gaps[1]} (40 doubled, capped at 60)`);
  t.true((gaps[2] ?? 0) >= 55 && (gaps[2] ?? 0) < 500, `third gap ${gaps[2]} stays at the cap`);
  await bus.close();
});

test('the published bytes are copied', async (t) => {
  const bus = createInProcessBus();
  const payload = bytes('original');
  await bus.publish('chain.eth.transfer', payload);
  payload.fill(0);
  const received: string[] = [];
  await bus.consume({ durableName: 'copy', filterSubject: 'chain.>' }, async (m) => {
    received.push(text(m));
    m.data.fill(0);
  });
  await bus.consume({ durableName: 'copy-2', filterSubject: 'chain.>' }, async (m) => {
    received.push(text(m));
  });
  await waitUntil(() => received.length >= 2);
  t.deepEqual(received, ['original', 'original']);
  await bus.close();
});

test('stop() waits for the running handler and interrupts a redelivery wait', async (t) => {
  const bus = createInProcessBus({ redeliveryDelayMs: 60_000, maxRedeliveryDelayMs: 60_000 });
  let deliveries = 0;
  await bus.publish('chain.eth.transfer', bytes('x'));
  const consumer = await bus.consume({ durableName: 'stuck', filterSubject: 'chain.>' }, async () => {
    deliveries += 1;
    throw new Error('always');
  });
  await waitUntil(() => deliveries === 1);
  const started = Date.now();
  await consumer.stop();
  t.true(Date.now() - started < 1_000);
  // The failed message is still the durable's next one, and its delivery count carries on.
  const counts: number[] = [];
  const again = await bus.consume({ durableName: 'stuck', filterSubject: 'chain.>' }, async (m) => {
    counts.push(m.deliveryCount);
  });
  await waitUntil(() => counts.length >= 1);
  t.deepEqual(counts, [2]);
  await again.stop();
  await bus.close();
});

test('one active consumer per durable name', async (t) => {
  const bus = createInProcessBus();
  const first = await bus.consume({ durableName: 'single', filterSubject: 'chain.>' }, async () => undefined);
  await t.throwsAsync(
    bus.consume({ durableName: 'single', filterSubject: 'chain.>' }, async () => undefined),
    {
      instanceOf: BusArgumentError,
    },
  );
  await first.stop();
  const second = await bus.consume({ durableName: 'single', filterSubject: 'chain.>' }, async () => undefined);
  await second.stop();
  await bus.close();
});

test('bad subjects and filters are rejected', async (t) => {
  const bus = createInProcessBus();
  await t.throwsAsync(bus.publish('chain.*.transfer', bytes('x')), { instanceOf: BusArgumentError });
  await t.throwsAsync(
    bus.consume({ durableName: 'x', filterSubject: 'chain.>.x' }, async () => undefined),
    {
      instanceOf: BusArgumentError,
    },
  );
  await t.throwsAsync(
    bus.consume({ durableName: 'x.y', filterSubject: 'chain.>' }, async () => undefined),
    {
      instanceOf: BusArgumentError,
    },
  );
  await bus.close();
});

test('close() stops every consumer and refuses further use', async (t) => {
  const bus = createInProcessBus();
  const received: string[] = [];
  await bus.consume({ durableName: 'a', filterSubject: 'chain.>' }, async (m) => {
    received.push(text(m));
  });
  await bus.publish('chain.eth.block', bytes('before'));
  await waitUntil(() => received.length === 1);
  await bus.close();
  await t.throwsAsync(bus.publish('chain.eth.block', bytes('after')), { instanceOf: BusClosedError });
  await t.throwsAsync(
    bus.consume({ durableName: 'b', filterSubject: 'chain.>' }, async () => undefined),
    {
      instanceOf: BusClosedError,
    },
  );
  t.deepEqual(received, ['before']);
  await bus.close();
});

/** A bus file in a temporary folder (removed after the test) and a way to open a bus on it. */
async function busFile(t: ExecutionContext): Promise<(now?: () => number) => Bus> {
  const dir = await mkdtemp(join(tmpdir(), 'weir-bus-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return (now) => createInProcessBus({ store: openSqliteBusStore(join(dir, 'bus.sqlite3')), ...(now ? { now } : {}) });
}

/** Consumes `durableName` into a list of texts; `refuse` throws for the texts it names. */
async function texts(
  bus: Bus,
  durableName: string,
  refuse: (text: string) => boolean = () => false,
  filterSubject = 'chain.>',
) {
  const received: string[] = [];
  const consumer = await bus.consume({ durableName, filterSubject }, async (m) => {
    received.push(text(m));
    if (refuse(text(m))) throw new Error('refused on purpose');
  });
  return { received, consumer };
}

test('on disk: a bus opened again after a stop delivers what was published and not acknowledged, from where each durable stood', async (t) => {
  const open = await busFile(t);
  const first = open();
  // A durable that stops before anything is published keeps its place too.
  await (await first.consume({ durableName: 'idle', filterSubject: 'chain.eth.final' }, async () => {})).stop();
  await first.publish('chain.eth.transfer', bytes('a'), { messageId: 'a' });
  await first.publish('chain.eth.transfer', bytes('b'), { messageId: 'b' });
  await first.publish('chain.eth.final', bytes('c'), { messageId: 'c' });
  const matcher = await texts(first, 'matcher', (value) => value === 'b');
  await waitUntil(() => matcher.received.includes('b'));
  await first.close();

  const second = open();
  const again = await texts(second, 'matcher');
  const idle = await texts(second, 'idle', () => false, 'chain.eth.final');
  await waitUntil(() => again.received.includes('c') && idle.received.includes('c'));
  t.deepEqual(again.received, ['b', 'c'], 'the refused message and the one behind it, not the acknowledged one');
  t.deepEqual(idle.received, ['c']);
  await second.close();
});

test('on disk: a bus opened again after a crash (never closed, a handler cut off) delivers the message being handled and what came after; the duplicate window carries over', async (t) => {
  const open = await busFile(t);
  let now = 1_000_000;
  const crashed = open(() => now);
  let entered = false;
  let release: () => void = () => undefined;
  const cutOff = new Promise<void>((resolve) => {
    release = resolve;
  });
  await crashed.consume({ durableName: 'matcher', filterSubject: 'chain.>' }, async () => {
    entered = true;
    await cutOff;
  });
  await crashed.publish('chain.eth.transfer', bytes('x'), { messageId: 'x' });
  await crashed.publish('chain.eth.final', bytes('y'), { messageId: 'y' });
  await waitUntil(() => entered);

  const restarted = open(() => now);
  now += 60_000;
  // The follower publishes again what it published before its checkpoint was saved: dropped.
  await restarted.publish('chain.eth.transfer', bytes('x again'), { messageId: 'x' });
  await restarted.publish('chain.eth.final', bytes('z'), { messageId: 'z' });
  const { received } = await texts(restarted, 'matcher');
  await waitUntil(() => received.includes('z'));
  t.deepEqual(received, ['x', 'y', 'z']);
  await restarted.close();
  release();
  await crashed.close();
});

/** How many messages the bus file holds, read beside the bus. */
function rowsIn(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare<[], number>('SELECT count(*) FROM messages').pluck().get() ?? 0;
  } finally {
    db.close();
  }
}

test('on disk: what every interested durable acknowledged leaves the file once older than the retention; what a durable still wants, or none wants yet, stays; positions survive a restart', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'weir-bus-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'bus.sqlite3');
  let now = 1_000_000;
  const open = () =>
    createInProcessBus({
      store: openSqliteBusStore(file),
      now: () => now,
      retainAcknowledgedMs: 60_000,
      pruneBatchSize: 2,
    });
  const first = open();
  // A durable of a network no longer followed: it holds back its own subjects only.
  await (await first.consume({ durableName: 'tron', filterSubject: 'chain.tron.>' }, async () => {})).stop();
  const acked = { eth: [] as string[], all: [] as string[] };
  const consumeInto = (bus: Bus, name: 'eth' | 'all', filterSubject: string) =>
    bus.consume({ durableName: name, filterSubject, onAcknowledged: (m) => acked[name].push(text(m)) }, async () => {});
  let eth = await consumeInto(first, 'eth', 'chain.eth.>');
  let all = await consumeInto(first, 'all', 'chain.eth.>');
  await all.stop();
  all = await consumeInto(first, 'all', 'chain.>');
  for (const value of ['e1', 'e2', 'e3', 'e4', 'e5']) await first.publish('chain.eth.transfer', bytes(value));
  await first.publish('chain.tron.transfer', bytes('t1'));
  await first.publish('chain.sol.transfer', bytes('s1'));
  await waitUntil(() => acked.eth.length === 5 && acked.all.length === 7);
  t.is(rowsIn(file), 7, 'nothing removed within the retention');

  // Past the retention (120 s: never less than the duplicate window), an acknowledgement starts a pass.
  now += 121_000;
  await first.publish('chain.eth.block', bytes('trigger'));
  await waitUntil(() => acked.all.includes('trigger') && acked.eth.includes('trigger'));
  await waitUntil(() => rowsIn(file) === 2, 5_000);
  await eth.stop();
  await all.stop();
  await first.close();
  t.is(
    rowsIn(file),
    2,
    't1 (the tron durable wants it) and the last message; s1 went with the only durable wanting it',
  );

  const second = open();
  eth = await consumeInto(second, 'eth', 'chain.eth.>');
  all = await consumeInto(second, 'all', 'chain.>');
  const tron = await texts(second, 'tron', () => false, 'chain.tron.>');
  const late = await texts(second, 'late');
  await second.publish('chain.eth.transfer', bytes('after'));
  await waitUntil(() => acked.eth.includes('after') && acked.all.includes('after') && late.received.includes('after'));
  await waitUntil(() => tron.received.length === 1);
  t.deepEqual(acked.eth.slice(6), ['after'], 'each durable resumes where it stood: the next position was kept');
  t.deepEqual(acked.all.slice(8), ['after']);
  t.deepEqual(tron.received, ['t1']);
  t.deepEqual(late.received, ['t1', 'trigger', 'after'], 'a durable created later gets what is kept');
  await second.close();
});

test('nothing is removed while no durable exists, so a durable created later gets every message', async (t) => {
  let now = 0;
  const bus = createInProcessBus({ now: () => now, retainAcknowledgedMs: 0, duplicateWindowMs: 0 });
  await bus.publish('chain.eth.transfer', bytes('early'));
  now += 1_000_000;
  const late = await texts(bus, 'late');
  await bus.publish('chain.eth.transfer', bytes('then'));
  await waitUntil(() => late.received.length === 2);
  t.deepEqual(late.received, ['early', 'then']);
  await bus.close();
});

for (const [kind, make] of [
  ['memory', async () => createMemoryBusStore()],
  [
    'sqlite',
    async (t: ExecutionContext) => {
      const dir = await mkdtemp(join(tmpdir(), 'weir-bus-'));
      t.teardown(() => rm(dir, { recursive: true, force: true }));
      return openSqliteBusStore(join(dir, 'bus.sqlite3'));
    },
  ],
] as const satisfies readonly (readonly [string, (t: ExecutionContext) => Promise<InProcessBusStore>])[]) {
  test(`${kind} store: reads of the log are bounded and by index; the last message is never removed`, async (t) => {
    const store = await make(t);
    for (let index = 0; index < 6; index++)
      store.append({
        subject: index % 2 === 0 ? 'chain.eth.transfer' : 'chain.sol.final',
        data: bytes(String(index)),
        messageId: undefined,
        publishedAt: index,
      });
    t.deepEqual(
      store.subjectsFrom(1, 2).map((entry) => entry.position),
      [1, 2],
    );
    store.remove([0, 1, 3, 5]);
    t.is(store.firstPosition(), 2);
    t.deepEqual(
      store.subjectsFrom(0, 10).map((entry) => [entry.position, entry.subject]),
      [
        [2, 'chain.eth.transfer'],
        [4, 'chain.eth.transfer'],
        [5, 'chain.sol.final'],
      ],
    );
    t.is(store.countFrom(3, 'chain.eth.transfer'), 1);
    t.is(store.nextFrom(3, 'chain.eth.transfer'), 4);
    t.is(store.nextFrom(5, 'chain.eth.transfer'), undefined);
    t.is(store.length(), 6);
    store.close();
  });
}
