import test from 'ava';
import type { CommandHandler } from '../actors/command-handler.ts';
import type { Bus, Consumer } from '../bus/bus.ts';
import { createInProcessBus } from '../bus/in-process-bus.ts';
import type { ProjectionRunner } from '../projections/projection-runner.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import { createPaymentIntents } from '../app/payment-intents.ts';
import { createMatcher } from './matcher.ts';

const waitUntil = async (condition: () => boolean, what: string): Promise<void> => {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
};

test('the matcher is drained once it has handled every chain message published so far; it calls onHandled after each, and a "not drained" is not asked of the bus again before then', async (t) => {
  const inner = createInProcessBus();
  t.teardown(() => inner.close());
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let askedBus = 0;
  // The matcher's handling of a message is held at the gate.
  const bus: Bus = {
    publish: (subject, data, options) => inner.publish(subject, data, options),
    deleteDurable: (durableName) => inner.deleteDurable(durableName),
    close: () => inner.close(),
    async consume(options, handler) {
      const consumer = await inner.consume(options, async (message) => {
        await gate;
        await handler(message);
      });
      const counted: Consumer = {
        stop: () => consumer.stop(),
        drained: () => {
          askedBus += 1;
          return consumer.drained();
        },
        backlog: () => consumer.backlog(),
      };
      return counted;
    },
  };
  let handled = 0;
  const matcher = createMatcher({
    bus,
    intents: createPaymentIntents({
      readStore: createEmbeddedReadStore({}),
      commands: {} as CommandHandler,
      projections: {} as ProjectionRunner,
    }),
    networks: ['sepolia'],
    log: () => {},
    onHandled: () => {
      handled += 1;
    },
  });
  t.false(await matcher.drained(), 'not started: nothing handled');
  await matcher.start();
  t.teardown(() => matcher.stop());
  t.true(await matcher.drained());

  // A malformed message is handled by dropping it: enough to hold the matcher at the gate.
  await inner.publish('chain.sepolia.transfer', new TextEncoder().encode('not json'));
  t.false(await matcher.drained());
  const asked = askedBus;
  t.false(await matcher.drained());
  t.false(await matcher.drained());
  t.is(askedBus, asked, 'remembered until the matcher handles a message');

  release();
  await waitUntil(() => handled === 1, 'onHandled');
  t.true(await matcher.drained(), 'drained as soon as onHandled is called');
});
