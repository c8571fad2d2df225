import test from 'ava';
import { findFreePort } from '../../test/support/free-port.ts';
import { BusConnectionError } from './errors.ts';
import { openBus } from './open-bus.ts';

test('without a NATS url the bus is in-process and works without any service', async (t) => {
  for (const options of [undefined, {}, { natsUrl: '' }, { natsUrl: undefined }]) {
    const bus = await openBus(options);
    const received: string[] = [];
    await bus.consume({ durableName: 'probe', filterSubject: 'chain.>' }, async (m) => {
      received.push(m.subject);
    });
    await bus.publish('chain.eth.block', new Uint8Array([1]));
    const deadline = Date.now() + 2_000;
    while (received.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 2));
    t.deepEqual(received, ['chain.eth.block']);
    await bus.close();
  }
});

test('with a NATS url the bus is NATS JetStream (here: unreachable, so it says where it tried)', async (t) => {
  const natsUrl = `nats://127.0.0.1:${await findFreePort()}`;
  const error = await t.throwsAsync(openBus({ natsUrl }), { instanceOf: BusConnectionError });
  t.true(error?.message.includes(natsUrl), error?.message);
});
