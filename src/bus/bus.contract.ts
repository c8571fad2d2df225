import type { ExecutionContext, TestFn } from 'ava';
import type { Bus, BusMessage, Consumer, ConsumerOptions, MessageHandler } from './bus.ts';

export type BusFactory = () => Promise<{ bus: Bus; cleanup(): Promise<void> }>;

type Received = { subject: string; text: string; deliveryCount: number; messageId: string | undefined };

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const bytes = (text: string): Uint8Array => encoder.encode(text);

/**
 * The behaviour every Bus adapter must have. Each test gets a fresh bus from `factory` and calls
 * `cleanup` at the end (even when it fails).
 *
 * The tests are serial: adapters such as NATS JetStream share one server per test file, and two
 * streams on one server may not capture overlapping subjects, so each test's bus owns `chain.>`
 * for its duration.
 */
export function busContract(test: TestFn, name: string, factory: BusFactory): void {
  const withBus = (title: string, body: (t: ExecutionContext, bus: Bus) => Promise<void>): void => {
    test.serial(`${name}: ${title}`, async (t) => {
      const { bus, cleanup } = await factory();
      const consumers: Consumer[] = [];
      const tracked: Bus = {
        publish: (subject, data, options) => bus.publish(subject, data, options),
        consume: async (options, handler) => {
          const consumer = await bus.consume(options, handler);
          consumers.push(consumer);
          return consumer;
        },
        deleteDurable: (durableName) => bus.deleteDurable(durableName),
        close: () => bus.close(),
      };
      try {
        await body(t, tracked);
      } finally {
        await Promise.all(consumers.map((consumer) => consumer.stop()));
        await cleanup();
      }
    });
  };

  withBus('round trip keeps the exact bytes, the subject and the messageId', async (t, bus) => {
    const payload = new Uint8Array([0, 1, 2, 127, 128, 254, 255, 0]);
    await bus.publish('chain.eth.transfer', payload, { messageId: 'round-trip-1' });
    const received: BusMessage[] = [];
    await bus.consume({ durableName: 'round-trip', filterSubject: 'chain.eth.transfer' }, async (message) => {
      received.push(message);
    });
    await waitUntil(() => received.length >= 1, 'the message to arrive');
    const message = received[0];
    t.truthy(message);
    t.is(message?.subject, 'chain.eth.transfer');
    t.deepEqual(Array.from(message?.data ?? []), Array.from(payload));
    t.is(message?.messageId, 'round-trip-1');
    t.is(message?.deliveryCount, 1);
  });

  withBus('publishing an empty payload works', async (t, bus) => {
    const { received } = await collect(bus, { durableName: 'empty', filterSubject: 'chain.>' });
    await bus.publish('chain.eth.block', new Uint8Array(0));
    await waitUntil(() => received.length >= 1, 'the empty message');
    t.is(received[0]?.text, '');
  });

  withBus('wildcard filters: * is one token, > is the rest', async (t, bus) => {
    const published = [
      'chain.eth.transfer',
      'chain.eth.block',
      'chain.sol.transfer',
      'chain.sol.reorg',
      'chain.eth.transfer.extra',
      'chain.tron.transfer',
    ];
    for (const subject of published) await bus.publish(subject, bytes(subject));
    // A last message both filters match: once it arrives, everything before it has been delivered.
    await bus.publish('chain.zz.transfer', bytes('end'));
    const transfers = await collect(bus, { durableName: 'transfers', filterSubject: 'chain.*.transfer' });
    const everything = await collect(bus, { durableName: 'everything', filterSubject: 'chain.>' });
    await waitUntil(
      () => transfers.received.some((m) => m.text === 'end') && everything.received.some((m) => m.text === 'end'),
      'both consumers to reach the last message',
    );
    t.deepEqual(
      transfers.received.map((m) => m.subject),
      ['chain.eth.transfer', 'chain.sol.transfer', 'chain.tron.transfer', 'chain.zz.transfer'],
    );
    t.deepEqual(
      everything.received.map((m) => m.subject),
      [...published, 'chain.zz.transfer'],
    );
  });

  withBus('200 messages arrive in publish order, one at a time', async (t, bus) => {
    const count = 200;
    let inFlight = 0;
    let maxInFlight = 0;
    const { received } = await collect(bus, { durableName: 'ordered', filterSubject: 'chain.>' }, async () => {
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      if (Math.random() < 0.1) await new Promise((resolve) => setTimeout(resolve, 1));
      inFlight -= 1;
    });
    for (let index = 0; index < count; index++) {
      await bus.publish(index % 2 === 0 ? 'chain.eth.transfer' : 'chain.sol.block', bytes(String(index)));
    }
    await waitUntil(() => received.length >= count, `${count} messages`);
    t.deepEqual(
      received.map((m) => m.text),
      Array.from({ length: count }, (_, index) => String(index)),
    );
    t.is(maxInFlight, 1);
  });

  withBus('a handler that throws gets the message again, later messages wait behind it', async (t, bus) => {
    for (const text of ['one', 'two', 'three']) await bus.publish('chain.eth.transfer', bytes(text));
    let failuresLeft = 1;
    const { received } = await collect(
      bus,
      { durableName: 'redeliver', filterSubject: 'chain.eth.transfer' },
      async (m) => {
        if (m.text === 'two' && failuresLeft > 0) {
          failuresLeft -= 1;
          throw new Error('handler failed on purpose');
        }
      },
    );
    await waitUntil(() => received.some((m) => m.text === 'three'), 'the third message');
    t.deepEqual(
      received.map((m) => [m.text, m.deliveryCount]),
      [
        ['one', 1],
        ['two', 1],
        ['two', 2],
        ['three', 1],
      ],
    );
  });

  withBus('a second publish with the same messageId is dropped', async (t, bus) => {
    await bus.publish('chain.eth.transfer', bytes('first'), { messageId: 'tx-1' });
    await bus.publish('chain.eth.transfer', bytes('duplicate'), { messageId: 'tx-1' });
    await bus.publish('chain.sol.transfer', bytes('other subject, same id'), { messageId: 'tx-1' });
    await bus.publish('chain.eth.transfer', bytes('second'), { messageId: 'tx-2' });
    await bus.publish('chain.eth.transfer', bytes('no id'));
    await bus.publish('chain.eth.transfer', bytes('no id'));
    await bus.publish('chain.eth.transfer', bytes('end'), { messageId: 'end' });
    const { received } = await collect(bus, { durableName: 'dedupe', filterSubject: 'chain.>' });
    await waitUntil(() => received.some((m) => m.text === 'end'), 'the last message');
    t.deepEqual(
      received.map((m) => [m.text, m.messageId]),
      [
        ['first', 'tx-1'],
        ['second', 'tx-2'],
        ['no id', undefined],
        ['no id', undefined],
        ['end', 'end'],
      ],
    );
  });

  withBus('a durable consumer resumes after the last acked message', async (t, bus) => {
    const all = Array.from({ length: 15 }, (_, index) => `m${index}`);
    for (const text of all.slice(0, 10)) await bus.publish('chain.eth.transfer', bytes(text));
    const options = { durableName: 'resume', filterSubject: 'chain.eth.*' };

    const first = await collect(bus, options);
    await waitUntil(() => first.received.length >= 4, 'the first consumer to ack 4 messages');
    await first.consumer.stop();
    const handledByFirst = first.received.map((m) => m.text);

    for (const text of all.slice(10)) await bus.publish('chain.eth.transfer', bytes(text));
    const second = await collect(bus, options);
    await waitUntil(() => second.received.some((m) => m.text === 'm14'), 'the second consumer to reach the end');

    t.true(handledByFirst.length >= 4);
    t.deepEqual(
      first.received.map((m) => m.text),
      handledByFirst,
      'a stopped consumer receives nothing more',
    );
    t.deepEqual([...handledByFirst, ...second.received.map((m) => m.text)], all);
  });

  withBus('a durable created after the messages were published still receives them', async (t, bus) => {
    await bus.publish('chain.eth.block', bytes('early'));
    const { received } = await collect(bus, { durableName: 'late', filterSubject: 'chain.eth.block' });
    await bus.publish('chain.eth.block', bytes('late'));
    await waitUntil(() => received.length >= 2, 'both messages');
    t.deepEqual(
      received.map((m) => m.text),
      ['early', 'late'],
    );
  });

  withBus('two durable names each get every message', async (t, bus) => {
    const texts = ['a', 'b', 'c', 'd', 'e'];
    const alpha = await collect(bus, { durableName: 'alpha', filterSubject: 'chain.>' });
    const beta = await collect(bus, { durableName: 'beta', filterSubject: 'chain.>' });
    for (const text of texts) await bus.publish('chain.eth.transfer', bytes(text));
    await waitUntil(() => alpha.received.length >= 5 && beta.received.length >= 5, 'both consumers');
    t.deepEqual(
      alpha.received.map((m) => m.text),
      texts,
    );
    t.deepEqual(
      beta.received.map((m) => m.text),
      texts,
    );
  });

  withBus(
    'drained and backlog: not drained until every published message was handled and acknowledged, the backlog counts them; other subjects do not count',
    async (t, bus) => {
      let release: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const entered: string[] = [];
      const acknowledged: string[] = [];
      let failuresLeft = 1;
      const consumer = await bus.consume(
        {
          durableName: 'drained',
          filterSubject: 'chain.eth.*',
          onAcknowledged: (message) => acknowledged.push(decoder.decode(message.data)),
        },
        async (message) => {
          const text = decoder.decode(message.data);
          entered.push(text);
          if (text === 'one') await gate;
          if (text === 'two' && failuresLeft > 0) {
            failuresLeft -= 1;
            throw new Error('handler failed on purpose');
          }
        },
      );
      t.true(await consumer.drained(), 'nothing published yet');
      t.is(await consumer.backlog(), 0);
      await bus.publish('chain.sol.transfer', bytes('elsewhere'));
      t.true(await consumer.drained(), 'a message outside the filter does not count');
      t.is(await consumer.backlog(), 0);

      await bus.publish('chain.eth.transfer', bytes('one'));
      t.false(await consumer.drained(), 'published, maybe not delivered yet');
      t.is(await consumer.backlog(), 1);
      await waitUntil(() => entered.includes('one'), 'the handler to start');
      t.false(await consumer.drained(), 'being handled');
      await bus.publish('chain.eth.transfer', bytes('behind'));
      t.is(await consumer.backlog(), 2, 'the one being handled and the one behind it');
      release();
      await waitUntil(() => acknowledged.includes('behind'), 'the acknowledgements');
      t.true(await consumer.drained(), 'drained as soon as onAcknowledged is called');
      t.is(await consumer.backlog(), 0);

      await bus.publish('chain.eth.transfer', bytes('two'));
      await waitUntil(() => entered.includes('two'), 'the failing delivery');
      t.false(await consumer.drained(), 'refused, waiting for redelivery');
      await waitUntil(() => acknowledged.includes('two'), 'the redelivery to be acknowledged');
      t.true(await consumer.drained());
      t.deepEqual(acknowledged, ['one', 'behind', 'two']);
    },
  );
  withBus(
    'continueFrom: new durables with narrower filters start after what the old one acknowledged, and the old one can be deleted',
    async (t, bus) => {
      const subjects = ['chain.eth.transfer', 'chain.sol.transfer', 'chain.eth.final', 'chain.sol.final'];
      for (let round = 0; round < 3; round++)
        for (const subject of subjects) await bus.publish(subject, bytes(`${subject}#${round}`));
      // The old durable handles the first 5 messages and refuses the 6th (chain.sol.transfer#1).
      const old = await collect(bus, { durableName: 'split-old', filterSubject: 'chain.>' }, async (message) => {
        if (message.text === 'chain.sol.transfer#1') throw new Error('refused on purpose');
      });
      await waitUntil(() => old.received.some((m) => m.text === 'chain.sol.transfer#1'), 'the refused message');
      await old.consumer.stop();
      const handled = old.received.filter((m) => m.text !== 'chain.sol.transfer#1').map((m) => m.text);
      t.deepEqual(handled, [
        'chain.eth.transfer#0',
        'chain.sol.transfer#0',
        'chain.eth.final#0',
        'chain.sol.final#0',
        'chain.eth.transfer#1',
      ]);

      const eth = await collect(bus, {
        durableName: 'split-eth',
        filterSubject: 'chain.eth.>',
        continueFrom: 'split-old',
      });
      const sol = await collect(bus, {
        durableName: 'split-sol',
        filterSubject: 'chain.sol.>',
        continueFrom: 'split-old',
      });
      await bus.deleteDurable('split-old');
      await bus.publish('chain.eth.transfer', bytes('eth-end'));
      await bus.publish('chain.sol.transfer', bytes('sol-end'));
      await waitUntil(
        () => eth.received.some((m) => m.text === 'eth-end') && sol.received.some((m) => m.text === 'sol-end'),
        'both new durables to reach the end',
      );
      t.deepEqual(
        eth.received.map((m) => m.text),
        ['chain.eth.final#1', 'chain.eth.transfer#2', 'chain.eth.final#2', 'eth-end'],
        'nothing the old durable acknowledged, in order',
      );
      t.deepEqual(
        sol.received.map((m) => m.text),
        ['chain.sol.transfer#1', 'chain.sol.final#1', 'chain.sol.transfer#2', 'chain.sol.final#2', 'sol-end'],
        'from the message the old one refused',
      );
      await eth.consumer.stop();

      // An existing durable keeps its place; a deleted one starts over; a missing predecessor means the start.
      const again = await collect(bus, {
        durableName: 'split-eth',
        filterSubject: 'chain.eth.>',
        continueFrom: 'split-sol',
      });
      const reborn = await collect(bus, {
        durableName: 'split-old',
        filterSubject: 'chain.eth.final',
        continueFrom: 'never-existed',
      });
      await bus.publish('chain.eth.final', bytes('last'));
      await waitUntil(
        () => again.received.some((m) => m.text === 'last') && reborn.received.some((m) => m.text === 'last'),
        'the last message',
      );
      t.deepEqual(
        again.received.map((m) => m.text),
        ['last'],
      );
      t.deepEqual(
        reborn.received.map((m) => m.text),
        ['chain.eth.final#0', 'chain.eth.final#1', 'chain.eth.final#2', 'last'],
      );
    },
  );

  withBus(
    'deleteDurable: refused while consumed, quiet for a name that does not exist; continueFrom must name another durable',
    async (t, bus) => {
      await bus.deleteDurable('never-existed');
      const { consumer } = await collect(bus, { durableName: 'busy', filterSubject: 'chain.>' });
      const refused = await t.throwsAsync(() => bus.deleteDurable('busy'));
      t.regex(refused?.message ?? '', /"busy" is being consumed/);
      await consumer.stop();
      await bus.deleteDurable('busy');
      const self = await t.throwsAsync(() =>
        bus.consume({ durableName: 'me', filterSubject: 'chain.>', continueFrom: 'me' }, async () => {}),
      );
      t.regex(self?.message ?? '', /cannot continue from itself/);
      const bad = await t.throwsAsync(() =>
        bus.consume({ durableName: 'me', filterSubject: 'chain.>', continueFrom: 'a.b' }, async () => {}),
      );
      t.regex(bad?.message ?? '', /durable name "a\.b" is invalid/);
    },
  );
}

/**
 * Consumes into `received`; `onMessage` runs first and may throw to refuse the message, in which
 * case it is still recorded (as a delivery).
 */
async function collect(
  bus: Bus,
  options: ConsumerOptions,
  onMessage?: (message: Received) => Promise<void>,
): Promise<{ received: Received[]; consumer: Consumer }> {
  const received: Received[] = [];
  const handler: MessageHandler = async (message) => {
    const entry: Received = {
      subject: message.subject,
      text: decoder.decode(message.data),
      deliveryCount: message.deliveryCount,
      messageId: message.messageId,
    };
    received.push(entry);
    if (onMessage !== undefined) await onMessage(entry);
  };
  const consumer = await bus.consume(options, handler);
  return { received, consumer };
}

async function waitUntil(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
