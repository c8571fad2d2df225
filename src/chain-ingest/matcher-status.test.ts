import test from 'ava';
import type { CommandHandler } from '../actors/command-handler.ts';
import { createInProcessBus } from '../bus/in-process-bus.ts';
import { COLLECTIONS } from '../projections/collections.ts';
import type { ProjectionRunner } from '../projections/projection-runner.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import { createManualClock } from '../shared/clock.ts';
import { chainPublisher, randomHash } from '../../test/support/chain-publisher.ts';
import { faultyReadStore } from '../../test/support/faulty-read-store.ts';
import { createMatcher } from './matcher.ts';

const waitUntil = async (condition: () => boolean, what: string): Promise<void> => {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

/** Looking up a deposit address fails while `broken.on` is set: the handling of every transfer throws. */
const storeWithBrokenLookups = (broken: { on: boolean }): ReadStore =>
  faultyReadStore(createEmbeddedReadStore({}), { get: (collection) => (broken.on && collection === COLLECTIONS.depositAddresses ? new Error('lookup failed') : null) });

test('status() names the chain message that keeps failing (held since its first failure on the clock, with its deliveries) until it is handled', async (t) => {
  const bus = createInProcessBus({ redeliveryDelayMs: 5, maxRedeliveryDelayMs: 20 });
  t.teardown(() => bus.close());
  const clock = createManualClock(Date.parse('2026-06-01T00:00:00Z'));
  const broken = { on: true };
  const matcher = createMatcher({ bus, readStore: storeWithBrokenLookups(broken), commands: {} as CommandHandler, projections: {} as ProjectionRunner, clock, log: () => {} });
  t.deepEqual(matcher.status(), { running: false, acknowledged: 0, failing: null });
  await matcher.start();
  t.teardown(() => matcher.stop());

  const transfer = await chainPublisher(bus).transfer({ to: '0x00000000000000000000000000000000000000aa', amount: '1', blockNumber: 1, blockHash: randomHash() });
  await waitUntil(() => (matcher.status().failing?.deliveries ?? 0) >= 2, 'a second failed delivery');
  t.like(matcher.status(), { running: true, acknowledged: 0, failing: { subject: `chain.${transfer.network}.transfer`, since: Date.parse('2026-06-01T00:00:00Z'), error: 'lookup failed' } });
  t.truthy(matcher.status().failing?.messageId);

  clock.advanceBy(90_000);
  const deliveries = matcher.status().failing!.deliveries;
  await waitUntil(() => matcher.status().failing!.deliveries > deliveries, 'one more failed delivery');
  t.is(matcher.status().failing!.since, Date.parse('2026-06-01T00:00:00Z'), 'the same message: failing since its first failure');

  broken.on = false;
  await waitUntil(() => matcher.status().acknowledged === 1, 'the message handled');
  t.deepEqual(matcher.status(), { running: true, acknowledged: 1, failing: null });
  await matcher.stop();
  t.false(matcher.status().running);
});
