import test from 'ava';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { startNatsServer, type NatsServerHandle } from '../../test/support/nats-server.ts';
import { createSystemClock } from '../shared/clock.ts';
import { createLease, LeaseLostError } from './lease.ts';
import { createNatsLeaseStore } from './nats-lease-store.ts';

// A real server, whose own max_age expires the entries: a short TTL, and the takeover itself is the
// signal waited for (bounded), never a sleep of a TTL.
const TTL = 1_000;
let server: NatsServerHandle | undefined;
const connections: NatsConnection[] = [];

test.before(async () => {
  server = await startNatsServer();
});
test.after.always(async () => {
  for (const nc of connections) await nc.close();
  await server?.stop();
});

async function store(bucket: string) {
  const nc = await connect({ servers: server!.url });
  connections.push(nc);
  return createNatsLeaseStore(nc, { ttlMs: TTL, bucket });
}

/** Steps `lease` every 50 ms until it holds, at most 10 s; how long it took. */
async function untilHeld(lease: { tick(): Promise<void>; held(): boolean }): Promise<number> {
  const started = Date.now();
  while (!lease.held()) {
    if (Date.now() - started > 10_000) throw new Error('not taken over within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
    await lease.tick();
  }
  return Date.now() - started;
}

test('create-if-absent and revision-checked updates: a write with a moved revision is refused', async (t) => {
  const leases = await store('checked');
  const first = await leases.write('work.a', { owner: 'x', released: false }, 0);
  t.not(first, null);
  t.is(await leases.write('work.a', { owner: 'y', released: false }, 0), null, 'create refused: it exists');
  const second = await leases.write('work.a', { owner: 'x', released: false }, first!);
  t.true(second! > first!);
  t.is(await leases.write('work.a', { owner: 'y', released: false }, first!), null, 'stale revision refused');
  t.deepEqual(await leases.read('work.a'), { owner: 'x', released: false, revision: second });
});

test('a killed owner loses its lease by the server expiring it; the other takes over and the stale owner is fenced off', async (t) => {
  const leases = await store('takeover');
  const clock = createSystemClock();
  const lost: string[] = [];
  const a = createLease({ store: leases, key: 'work.sweeper', owner: 'a', clock, onLost: (why) => lost.push(why) });
  const b = createLease({ store: leases, key: 'work.sweeper', owner: 'b', clock });
  await a.tick(); // stepped by hand only: "killed" once it stops stepping
  await b.tick();
  t.true(a.held());
  t.false(b.held());
  const took = await untilHeld(b);
  t.log(`taken over ${took} ms after the last renewal (TTL ${TTL} ms)`);
  t.true(took >= TTL - 100, `not before the TTL (${took} ms)`);
  let written = false;
  await t.throwsAsync(
    a.fence(async () => {
      written = true;
    }),
    { instanceOf: LeaseLostError },
  );
  t.false(written);
  t.false(a.held());
  t.is(lost.length, 1);
  t.true(await b.fence(async () => true));
  await b.stop();
});

test('a released lease is taken by the next step of another, at once', async (t) => {
  const leases = await store('release');
  const clock = createSystemClock();
  const a = createLease({ store: leases, key: 'work.timers', owner: 'a', clock });
  const b = createLease({ store: leases, key: 'work.timers', owner: 'b', clock });
  await a.tick();
  await b.tick();
  t.false(b.held());
  await a.stop();
  await b.tick();
  t.true(b.held());
  await b.stop();
});
