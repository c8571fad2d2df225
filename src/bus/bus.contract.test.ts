import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { startNatsServer, type NatsServerHandle } from '../../test/support/nats-server.ts';
import { busContract } from './bus.contract.ts';
import { createInProcessBus } from './in-process-bus.ts';
import { openSqliteBusStore } from './in-process-bus-store.ts';
import { createNatsJetStreamBus } from './nats-jetstream-bus.ts';

busContract(test, 'in-process', async () => {
  const bus = createInProcessBus();
  return { bus, cleanup: () => bus.close() };
});

busContract(test, 'in-process on disk', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'weir-bus-'));
  const bus = createInProcessBus({ store: openSqliteBusStore(join(dir, 'bus.sqlite3')) });
  return {
    bus,
    async cleanup() {
      await bus.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

// One nats-server for this file; each test gets its own stream, deleted afterwards (the contract
// runs its tests serially, so streams capturing `chain.>` never overlap).
let server: NatsServerHandle | undefined;
let streamCounter = 0;

test.before(async () => {
  server = await startNatsServer();
});

test.after.always(async () => {
  await server?.stop();
});

busContract(test, 'nats-jetstream', async () => {
  if (server === undefined) throw new Error('nats-server did not start');
  const url = server.url;
  streamCounter += 1;
  const streamName = `WEIR_CONTRACT_${streamCounter}`;
  const bus = await createNatsJetStreamBus({ servers: url, streamName });
  return {
    bus,
    async cleanup() {
      await bus.close();
      const nc = await connect({ servers: url });
      try {
        const jsm = await jetstreamManager(nc);
        await jsm.streams.delete(streamName);
      } finally {
        await nc.close();
      }
    },
  };
});
