import test, { type ExecutionContext } from 'ava';
import type { Bus } from '../bus/bus.ts';
import type { CommandHandler } from '../actors/command-handler.ts';
import { createInProcessBus } from '../bus/in-process-bus.ts';
import { createNatsJetStreamBus } from '../bus/nats-jetstream-bus.ts';
import { COLLECTIONS } from '../projections/collections.ts';
import type { ProjectionRunner } from '../projections/projection-runner.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import { createManualClock } from '../shared/clock.ts';
import { chainPublisher, randomHash } from '../../test/support/chain-publisher.ts';
import { faultyReadStore } from '../../test/support/faulty-read-store.ts';
import { startNatsServer } from '../../test/support/nats-server.ts';
import { createPaymentIntents } from '../app/payment-intents.ts';
import { createMatcher, matcherDurableName, SHARED_MATCHER_DURABLE_NAME } from './matcher.ts';
import { TEST_NETWORK } from './test-rail.ts';

const waitUntil = async (condition: () => boolean, what: string): Promise<void> => {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

/** Looking up a deposit address on `broken.network` fails while `broken.on` is set: the handling of each transfer there throws. */
const storeWithBrokenLookups = (broken: { on: boolean; network?: string }): ReadStore =>
  faultyReadStore(createEmbeddedReadStore({}), {
    get: (collection, id) =>
      broken.on &&
      collection === COLLECTIONS.depositAddresses &&
      id.startsWith(`${broken.network ?? TEST_NETWORK.network}:`)
        ? new Error('lookup failed')
        : null,
  });

const OTHER_NETWORK = { ...TEST_NETWORK, network: 'weir-testnet-b', chainId: 7358 };
const SOMEWHERE = '0x00000000000000000000000000000000000000aa';
const unused = { commands: {} as CommandHandler, projections: {} as ProjectionRunner };

test('status() names the chain message that keeps failing (held since its first failure on the clock, with its deliveries) until it is handled', async (t) => {
  const bus = createInProcessBus({ redeliveryDelayMs: 5, maxRedeliveryDelayMs: 20 });
  t.teardown(() => bus.close());
  const clock = createManualClock(Date.parse('2026-06-01T00:00:00Z'));
  const broken = { on: true };
  const matcher = createMatcher({
    bus,
    intents: createPaymentIntents({ readStore: storeWithBrokenLookups(broken), ...unused }),
    log: () => {},
    clock,
    networks: [TEST_NETWORK.network],
  });
  t.deepEqual(matcher.status(), { running: false, networks: [TEST_NETWORK.network], acknowledged: 0, failing: [] });
  await matcher.start();
  t.teardown(() => matcher.stop());

  const transfer = await chainPublisher(bus).transfer({
    to: '0x00000000000000000000000000000000000000aa',
    amount: '1',
    blockNumber: 1,
    blockHash: randomHash(),
  });
  const failingNow = () => matcher.status().failing[0];
  await waitUntil(() => (failingNow()?.deliveries ?? 0) >= 2, 'a second failed delivery');
  t.like(matcher.status(), { running: true, acknowledged: 0 });
  t.like(failingNow(), {
    network: transfer.network,
    subject: `chain.${transfer.network}.transfer`,
    since: Date.parse('2026-06-01T00:00:00Z'),
    error: 'lookup failed',
  });
  t.truthy(failingNow()?.messageId);

  clock.advanceBy(90_000);
  const deliveries = failingNow()!.deliveries;
  await waitUntil(() => failingNow()!.deliveries > deliveries, 'one more failed delivery');
  t.is(failingNow()!.since, Date.parse('2026-06-01T00:00:00Z'), 'the same message: failing since its first failure');

  broken.on = false;
  await waitUntil(() => matcher.status().acknowledged === 1, 'the message handled');
  t.deepEqual(matcher.status(), { running: true, networks: [TEST_NETWORK.network], acknowledged: 1, failing: [] });
  await matcher.stop();
  t.false(matcher.status().running);
});

test('a message that keeps failing holds up the later messages of its own network only; a network no rail offers is not consumed', async (t) => {
  const bus = createInProcessBus({ redeliveryDelayMs: 5, maxRedeliveryDelayMs: 20 });
  t.teardown(() => bus.close());
  const broken = { on: true, network: TEST_NETWORK.network };
  const matcher = createMatcher({
    bus,
    intents: createPaymentIntents({ readStore: storeWithBrokenLookups(broken), ...unused }),
    log: () => {},
    networks: [OTHER_NETWORK.network, TEST_NETWORK.network],
  });
  await matcher.start();
  t.teardown(() => matcher.stop());
  t.deepEqual(matcher.status().networks, [TEST_NETWORK.network, OTHER_NETWORK.network].sort());

  const stuck = chainPublisher(bus);
  const other = chainPublisher(bus, OTHER_NETWORK);
  await stuck.transfer({ to: SOMEWHERE, amount: '1', blockNumber: 1, blockHash: randomHash() });
  await other.transfer({ to: SOMEWHERE, amount: '1', blockNumber: 1, blockHash: randomHash() });
  await stuck.final(1, randomHash());
  await other.final(1, randomHash());
  await chainPublisher(bus, { ...TEST_NETWORK, network: 'weir-unoffered' }).final(1, randomHash());

  await waitUntil(() => matcher.status().acknowledged === 2, "the other network's two messages");
  await waitUntil(() => (matcher.status().failing[0]?.deliveries ?? 0) >= 3, 'the stuck message redelivered');
  t.is(matcher.status().acknowledged, 2, "the stuck network's final waits behind its transfer");
  t.deepEqual(
    matcher.status().failing.map((m) => m.subject),
    [`chain.${TEST_NETWORK.network}.transfer`],
  );
  t.false(await matcher.drained());
  t.false(await matcher.drained([TEST_NETWORK.network, OTHER_NETWORK.network]));
  t.true(
    await matcher.drained([OTHER_NETWORK.network]),
    'the other network has nothing left: what waits on it goes ahead',
  );
  t.true(await matcher.drained(['weir-unoffered']), 'a network the matcher does not handle has nothing to wait for');

  broken.on = false;
  await waitUntil(() => matcher.status().acknowledged === 4, "the stuck network's messages");
  t.deepEqual(matcher.status().failing, []);
  t.true(await matcher.drained(), 'the message of a network no rail offers does not count');
});

/** The matcher's durables, on `bus`: taken over from the shared durable of earlier versions, kept across a restart. */
async function takeOverAndRestart(t: ExecutionContext, bus: Bus): Promise<void> {
  const a = chainPublisher(bus);
  const b = chainPublisher(bus, OTHER_NETWORK);
  // The shared durable of an earlier Weir handled these two, and stopped.
  await a.final(1, randomHash());
  await b.final(1, randomHash());
  let handledBefore = 0;
  const shared = await bus.consume({ durableName: SHARED_MATCHER_DURABLE_NAME, filterSubject: 'chain.>' }, async () => {
    handledBefore += 1;
  });
  await waitUntil(() => handledBefore === 2, 'the shared durable to handle two messages');
  await shared.stop();
  // Published while no Weir ran.
  await a.final(2, randomHash());
  await b.final(2, randomHash());
  await b.final(3, randomHash());

  const startMatcher = async () => {
    const started = createMatcher({
      bus,
      intents: createPaymentIntents({ readStore: createEmbeddedReadStore({}), ...unused }),
      log: () => {},
      networks: [TEST_NETWORK.network, OTHER_NETWORK.network],
    });
    await started.start();
    t.teardown(() => started.stop());
    return started;
  };
  const matcher = await startMatcher();
  await waitUntil(() => matcher.status().acknowledged === 3, 'the three messages published after');
  t.true(await matcher.drained());
  t.is(matcher.status().acknowledged, 3, 'none of the two the shared durable handled');

  // Deleted: a consumer under its name now starts at the first message.
  let seen = 0;
  const reader = await bus.consume({ durableName: SHARED_MATCHER_DURABLE_NAME, filterSubject: 'chain.>' }, async () => {
    seen += 1;
  });
  await waitUntil(() => seen === 5, 'every message, from the first');
  await reader.stop();
  // Each network's durable stays where it is across a restart.
  await matcher.stop();
  await a.final(4, randomHash());
  const restarted = await startMatcher();
  await waitUntil(() => restarted.status().acknowledged === 1, 'the one new message');
  t.true(await restarted.drained());
  t.is(matcherDurableName('base'), 'weir-matcher-base');
}

test("in-process: the networks' durables start where the one shared durable of earlier versions stood, which is then deleted", async (t) => {
  const bus = createInProcessBus();
  t.teardown(() => bus.close());
  await takeOverAndRestart(t, bus);
});

test("NATS JetStream: the networks' durables start where the one shared durable of earlier versions stood, which is then deleted", async (t) => {
  const server = await startNatsServer();
  t.teardown(() => server.stop());
  const bus = await createNatsJetStreamBus({ servers: server.url, redeliveryDelayMs: 5 });
  t.teardown(() => bus.close());
  await takeOverAndRestart(t, bus);
});
