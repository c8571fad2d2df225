import test from 'ava';
import type { BusMessage } from './bus.ts';
import { BusArgumentError, BusClosedError } from './errors.ts';
import { createInProcessBus } from './in-process-bus.ts';

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
