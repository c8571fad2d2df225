import test from 'ava';
import { AckPolicy, DeliverPolicy, jetstreamManager, StorageType } from '@nats-io/jetstream';
import { connect, nanos } from '@nats-io/transport-node';
import { findFreePort } from '../../test/support/free-port.ts';
import { startNatsServer, type NatsServerHandle } from '../../test/support/nats-server.ts';
import { BusArgumentError, BusClosedError, BusConnectionError } from './errors.ts';
import { createNatsJetStreamBus } from './nats-jetstream-bus.ts';

let server: NatsServerHandle | undefined;

test.before(async () => {
  server = await startNatsServer();
});

test.after.always(async () => {
  await server?.stop();
});

const urlOf = (): string => {
  if (server === undefined) throw new Error('nats-server did not start');
  return server.url;
};

async function withManager<T>(run: (jsm: Awaited<ReturnType<typeof jetstreamManager>>) => Promise<T>): Promise<T> {
  const nc = await connect({ servers: urlOf() });
  try {
    return await run(await jetstreamManager(nc));
  } finally {
    await nc.close();
  }
}

test('a server that is not there gives a BusConnectionError naming the url', async (t) => {
  const url = `nats://127.0.0.1:${await findFreePort()}`;
  const error = await t.throwsAsync(createNatsJetStreamBus({ servers: url }), { instanceOf: BusConnectionError });
  t.true(error?.message.includes(url), error?.message);
});

test('creates the stream with file storage and the duplicate window, and updates it later', async (t) => {
  const streamName = 'STREAM_SETUP';
  const first = await createNatsJetStreamBus({ servers: urlOf(), streamName, subjects: ['setup.>'], duplicateWindowMs: 5_000 });
  await first.close();
  const created = await withManager((jsm) => jsm.streams.info(streamName));
  t.deepEqual(created.config.subjects, ['setup.>']);
  t.is(created.config.storage, StorageType.File);
  t.is(created.config.duplicate_window, nanos(5_000));

  const second = await createNatsJetStreamBus({
    servers: urlOf(),
    streamName,
    subjects: ['setup.>', 'setup2.>'],
    duplicateWindowMs: 7_000,
  });
  await second.close();
  const updated = await withManager((jsm) => jsm.streams.info(streamName));
  t.deepEqual(updated.config.subjects, ['setup.>', 'setup2.>']);
  t.is(updated.config.duplicate_window, nanos(7_000));
});

test('durable consumers are explicit-ack pull consumers, one message in flight, from the start', async (t) => {
  const streamName = 'STREAM_CONSUMER';
  const bus = await createNatsJetStreamBus({ servers: urlOf(), streamName, subjects: ['cons.>'] });
  const consumer = await bus.consume({ durableName: 'projector', filterSubject: 'cons.*.transfer' }, async () => undefined);
  const info = await withManager((jsm) => jsm.consumers.info(streamName, 'projector'));
  t.is(info.config.durable_name, 'projector');
  t.is(info.config.ack_policy, AckPolicy.Explicit);
  t.is(info.config.deliver_policy, DeliverPolicy.All);
  t.is(info.config.filter_subject, 'cons.*.transfer');
  t.is(info.config.max_ack_pending, 1);
  t.is(info.config.ack_wait, nanos(5_000));
  await consumer.stop();
  await bus.close();
});

test('publishing outside the stream subjects is refused up front', async (t) => {
  const bus = await createNatsJetStreamBus({ servers: urlOf(), streamName: 'STREAM_SUBJECTS', subjects: ['subj.>'] });
  const error = await t.throwsAsync(bus.publish('other.eth.transfer', new Uint8Array([1])), {
    instanceOf: BusArgumentError,
  });
  t.true(error?.message.includes('STREAM_SUBJECTS'));
  await bus.close();
});

test('close() drains and refuses further use', async (t) => {
  const bus = await createNatsJetStreamBus({ servers: urlOf(), streamName: 'STREAM_CLOSE', subjects: ['close.>'] });
  const received: number[] = [];
  await bus.consume({ durableName: 'c', filterSubject: 'close.>' }, async (m) => {
    received.push(m.data[0] ?? -1);
  });
  await bus.publish('close.x', new Uint8Array([7]));
  const deadline = Date.now() + 5_000;
  while (received.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
  await bus.close();
  await bus.close();
  t.deepEqual(received, [7]);
  await t.throwsAsync(bus.publish('close.x', new Uint8Array([8])), { instanceOf: BusClosedError });
});
