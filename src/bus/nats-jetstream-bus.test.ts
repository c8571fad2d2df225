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
  const first = await createNatsJetStreamBus({
    servers: urlOf(),
    streamName,
    subjects: ['setup.>'],
    duplicateWindowMs: 5_000,
  });
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
  const consumer = await bus.consume(
    { durableName: 'projector', filterSubject: 'cons.*.transfer' },
    async () => undefined,
  );
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

test("drained() says once when the durable's state cannot be read, and once when it can again, naming stream and durable but no credentials", async (t) => {
  const streamName = 'STREAM_UNREADABLE';
  const lines: string[] = [];
  const url = urlOf().replace('nats://', 'nats://weir:s3cret@');
  const bus = await createNatsJetStreamBus({
    servers: url,
    streamName,
    subjects: ['unread.>'],
    log: (line) => lines.push(line),
  });
  t.teardown(() => bus.close());
  const consumer = await bus.consume({ durableName: 'expiry-check', filterSubject: 'unread.>' }, async () => undefined);
  t.true(await consumer.drained());
  t.deepEqual(lines, [], 'nothing to say while it answers');

  const info = await withManager((jsm) => jsm.consumers.info(streamName, 'expiry-check'));
  await withManager((jsm) => jsm.consumers.delete(streamName, 'expiry-check'));
  for (let call = 0; call < 3; call++) {
    await t.throwsAsync(consumer.drained(), { instanceOf: BusConnectionError, message: /expiry-check/ });
  }
  t.is(lines.length, 1, lines.join('\n'));
  t.regex(lines[0] ?? '', /durable consumer "expiry-check" of stream "STREAM_UNREADABLE".*consumer not found/i);

  await withManager((jsm) => jsm.consumers.add(streamName, { ...info.config, durable_name: 'expiry-check' }));
  t.true(await consumer.drained());
  t.true(await consumer.drained());
  t.is(lines.length, 2, lines.join('\n'));
  t.regex(lines[1] ?? '', /durable consumer "expiry-check" of stream "STREAM_UNREADABLE".* can be read again/);
  t.false(lines.join('\n').includes('s3cret'), 'no password in the lines');
  t.true(lines[0]?.includes('nats://***@127.0.0.1:'), lines[0]);
  await consumer.stop();
});

test('connected() is false while the server is gone and true once the client is back (what /health reads)', async (t) => {
  const own = await startNatsServer();
  const errors: Error[] = [];
  const bus = await createNatsJetStreamBus({
    servers: own.url,
    streamName: 'STREAM_CONNECTION',
    subjects: ['conn.>'],
    onError: (e) => errors.push(e),
  });
  t.true(bus.connected?.());
  await own.stop();
  const until = async (wanted: boolean) => {
    const deadline = Date.now() + 20_000;
    while (bus.connected?.() !== wanted && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    return bus.connected?.();
  };
  t.false(await until(false));
  t.true(errors.some((e) => e instanceof BusConnectionError));
  const again = await startNatsServer({ port: own.port });
  t.teardown(() => again.stop());
  t.true(await until(true));
  await bus.close();
});
