import test from 'ava';
import type { MatcherStatus } from '../chain-ingest/matcher.ts';
import type { EvmFollowerStatus } from '../chain-ingest/evm/follower/evm-follower.ts';
import type { ProjectionFailure } from '../projections/projection-runner.ts';
import { COLLECTIONS, type WebhookDeliveryDoc } from '../projections/collections.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import { createManualClock } from '../shared/clock.ts';
import type { ReadDocument, ReadStore } from '../read-store/read-store.ts';
import { createHealth, type HealthDeps } from './health.ts';

const START = Date.parse('2026-06-01T00:00:00Z');

function parts() {
  const clock = createManualClock(START);
  const state = {
    head: 42n as bigint | null,
    headFails: false,
    headHangs: false,
    position: '42' as string | null,
    projectionFailure: null as ProjectionFailure | null,
    matcher: { running: true, networks: ['base', 'polygon'], acknowledged: 7, failing: [] } as MatcherStatus,
    follower: {
      network: 'base',
      head: 100n,
      processed: 100n,
      pendingFinal: 0,
      caughtUpAt: START,
      endpoint: 'http://rpc.example/key-123',
      headSource: 'polling',
      lastError: null,
      running: true,
    } as EvmFollowerStatus,
  };
  const deps: HealthDeps = {
    clock,
    eventStore: {
      headPosition: () =>
        state.headHangs
          ? new Promise(() => {})
          : state.headFails
            ? Promise.reject(new Error('connect ECONNREFUSED secret@db'))
            : Promise.resolve(state.head),
    },
    projections: { health: () => ({ position: state.position, failing: state.projectionFailure }) },
    matcher: { status: () => state.matcher },
    followers: [{ status: () => state.follower }],
    answerTimeoutMs: 5,
  };
  return { clock, state, deps };
}

test('everything answering and up to date is ok, with the read models position and the log head', async (t) => {
  const { deps } = parts();
  t.deepEqual(await createHealth(deps).report(), {
    status: 'ok',
    position: '42',
    head: '42',
    checks: [
      { name: 'event_store', status: 'ok', reason: null },
      { name: 'projections', status: 'ok', reason: null },
      { name: 'matcher', status: 'ok', reason: null },
      { name: 'follower:base', status: 'ok', reason: null },
    ],
  });
});

test('read models that fail to follow the log make Weir failing; the error itself is not shown', async (t) => {
  const { deps, state } = parts();
  state.projectionFailure = { error: 'MongoServerError: bad auth for user weir', since: START - 30_000, attempts: 3 };
  const report = await createHealth(deps).report();
  t.is(report.status, 'failing');
  const check = report.checks.find((c) => c.name === 'projections')!;
  t.is(check.status, 'failing');
  t.regex(check.reason!, /failed to follow the log since 2026-05-31T23:59:30.000Z \(3 attempts/);
  t.false(JSON.stringify(report).includes('bad auth'));
});

test('a log that errs or does not answer in time is failing, and the head is unknown', async (t) => {
  const { deps, state } = parts();
  const health = createHealth(deps);
  state.headFails = true;
  const erring = await health.report();
  t.is(erring.status, 'failing');
  t.is(erring.head, null);
  t.like(erring.checks[0], {
    name: 'event_store',
    status: 'failing',
    reason: 'the log answered with an error (see the log): nothing can be written',
  });
  t.false(JSON.stringify(erring).includes('secret'));
  state.headFails = false;
  state.headHangs = true;
  const silent = await health.report();
  t.like(silent.checks[0], { status: 'failing', reason: 'the log did not answer within 5 ms: nothing can be written' });
});

test('a chain message failing for a minute or more makes the matcher degraded, not before, naming each network held up', async (t) => {
  const { deps, state, clock } = parts();
  const health = createHealth(deps);
  const base = {
    network: 'base',
    subject: 'chain.base.transfer',
    messageId: 'm-1',
    deliveries: 4,
    since: START,
    error: 'boom',
  };
  state.matcher = { running: true, networks: ['base', 'polygon'], acknowledged: 7, failing: [base] };
  clock.advanceBy(59_999);
  t.like((await health.report()).checks[2], { name: 'matcher', status: 'ok' });
  clock.advanceBy(1);
  const report = await health.report();
  t.is(report.status, 'degraded');
  t.like(report.checks[2], {
    name: 'matcher',
    status: 'degraded',
    reason:
      'a chain message on chain.base.transfer has failed since 2026-06-01T00:00:00.000Z (4 deliveries; see the log): the later chain messages of that network wait, other networks go on',
  });

  const polygon = {
    network: 'polygon',
    subject: 'chain.polygon.final',
    messageId: 'm-2',
    deliveries: 2,
    since: START + 30_000,
    error: 'boom',
  };
  state.matcher = { ...state.matcher, failing: [base, polygon] };
  t.false((await health.report()).checks[2]!.reason!.includes('polygon'), 'polygon not yet: failing for 30 s only');
  clock.advanceBy(30_000);
  t.like((await health.report()).checks[2], {
    reason:
      'a chain message on chain.base.transfer has failed since 2026-06-01T00:00:00.000Z (4 deliveries; see the log); a chain message on chain.polygon.final has failed since 2026-06-01T00:00:30.000Z (2 deliveries; see the log): the later chain messages of those networks wait, other networks go on',
  });
  t.false(JSON.stringify(await health.report()).includes('boom'), 'the error itself is not shown');
});

test('a follower that has not read its head for five minutes, or is stopped, is degraded; its endpoint is never shown', async (t) => {
  const { deps, state, clock } = parts();
  const health = createHealth(deps);
  clock.advanceBy(5 * 60_000 - 1);
  t.is((await health.report()).status, 'ok');
  clock.advanceBy(1);
  state.follower = { ...state.follower, lastError: 'fetch failed http://rpc.example/key-123' };
  const behind = await health.report();
  t.is(behind.status, 'degraded');
  t.like(behind.checks[3], {
    name: 'follower:base',
    status: 'degraded',
    reason:
      "the follower of base has not read the chain's head since 2026-06-01T00:00:00.000Z; its node fails (see the log): payments on it wait",
  });
  t.false(JSON.stringify(behind).includes('key-123'));

  state.follower = { ...state.follower, caughtUpAt: null, lastError: null };
  t.regex(
    (await health.report()).checks[3]!.reason!,
    /has not read the chain's head since Weir started: payments on it wait/,
  );
  state.follower = { ...state.follower, running: false };
  t.regex((await health.report()).checks[3]!.reason!, /is stopped/);
});

test('the worst part decides: failing outranks degraded', async (t) => {
  const { deps, state, clock } = parts();
  const health = createHealth(deps);
  clock.advanceBy(10 * 60_000);
  t.is((await health.report()).status, 'degraded');
  state.projectionFailure = { error: 'x', since: START, attempts: 1 };
  t.is((await health.report()).status, 'failing');
});

const delivery = (id: string, status: string, nextAttemptAt: number | null) =>
  ({
    _id: id,
    id,
    organizationId: 'org',
    environment: 'test',
    endpointId: 'e',
    eventId: `ev-${id}`,
    eventType: 'checkout_session.completed',
    eventObject: 'checkoutSession',
    source: { streamId: 'checkout_session-1', revision: 3 },
    createdAt: new Date(START).toISOString(),
    firstDueAt: START,
    status,
    attempts: 0,
    nextAttemptAt,
    log: [],
  }) as unknown as WebhookDeliveryDoc;

test('webhook deliveries due five minutes ago or more and still pending make Weir degraded: the dispatcher is behind', async (t) => {
  const { deps, clock } = parts();
  const readStore = createEmbeddedReadStore({ indexedFields: ['status'] });
  const deliveries = readStore.collection<WebhookDeliveryDoc>(COLLECTIONS.webhookDeliveries);
  await deliveries.put(delivery('late-1', 'pending', START));
  await deliveries.put(delivery('late-2', 'pending', START + 1000));
  await deliveries.put(delivery('retrying', 'pending', START + 60 * 60_000));
  await deliveries.put(delivery('done', 'succeeded', null));
  await deliveries.put(delivery('gave-up', 'failed', null));
  const health = createHealth({ ...deps, readStore });
  clock.advanceBy(5 * 60_000);
  t.like(
    (await health.report()).checks.find((c) => c.name === 'webhooks'),
    { status: 'ok' },
    'due exactly five minutes ago: not yet',
  );
  clock.advanceBy(1001);
  const report = await health.report();
  t.is(report.status, 'degraded');
  t.like(
    report.checks.find((c) => c.name === 'webhooks'),
    {
      status: 'degraded',
      reason:
        '2 webhook deliveries have waited to be sent since 2026-06-01T00:00:00.000Z: the dispatcher is behind (see the log)',
    },
  );
  await deliveries.put(delivery('late-1', 'succeeded', null));
  t.like(
    (await health.report()).checks.find((c) => c.name === 'webhooks'),
    {
      reason:
        '1 webhook delivery has waited to be sent since 2026-06-01T00:00:01.000Z: the dispatcher is behind (see the log)',
    },
  );
});

test('a read store that errs or does not answer is failing', async (t) => {
  const { deps } = parts();
  const broken: ReadStore = {
    ...createEmbeddedReadStore(),
    collection: () => {
      throw new Error('MongoNetworkError: mongodb://weir:hunter2@db');
    },
  };
  const report = await createHealth({ ...deps, readStore: broken }).report();
  t.is(report.status, 'failing');
  t.like(
    report.checks.find((c) => c.name === 'read_store'),
    { status: 'failing', reason: 'the read store answered with an error (see the log): reads fail' },
  );
  t.false(JSON.stringify(report).includes('hunter2'));
  const silent = createEmbeddedReadStore();
  const hanging: ReadStore = {
    ...silent,
    collection: <T extends ReadDocument>() => ({
      ...silent.collection<T>('x'),
      find: () => new Promise<T[]>(() => {}),
    }),
  };
  t.like(
    (await createHealth({ ...deps, readStore: hanging }).report()).checks.find((c) => c.name === 'read_store'),
    { reason: 'the read store did not answer within 5 ms: reads fail' },
  );
});

test('timers whose command has failed for five minutes or more make Weir degraded, naming their kinds', async (t) => {
  const { deps, clock } = parts();
  let failing = [
    { id: 'checkout_session.expire:1', kind: 'checkout_session.expire', failures: 3, since: START },
    { id: 'mail.retry:2', kind: 'mail.retry', failures: 2, since: START + 1000 },
    { id: 'checkout_session.expire:3', kind: 'checkout_session.expire', failures: 1, since: START + 4 * 60_000 },
  ];
  const health = createHealth({ ...deps, timers: { status: () => ({ failing }) } });
  clock.advanceBy(5 * 60_000 - 1);
  t.like(
    (await health.report()).checks.find((c) => c.name === 'timers'),
    { status: 'ok', reason: null },
  );
  clock.advanceBy(1001);
  const report = await health.report();
  t.like(
    report.checks.find((c) => c.name === 'timers'),
    {
      status: 'degraded',
      reason:
        '2 timers have failed since 2026-06-01T00:00:00.000Z (checkout_session.expire, mail.retry; retried, see the log): what they do waits',
    },
  );
  failing = [failing[1]!];
  t.regex(
    (await health.report()).checks.find((c) => c.name === 'timers')!.reason!,
    /^1 timer has failed since 2026-06-01T00:00:01.000Z \(mail\.retry;/,
  );
  failing = [];
  t.like(
    (await health.report()).checks.find((c) => c.name === 'timers'),
    { status: 'ok', reason: null },
  );
});

test('a lost connection to NATS makes Weir degraded while it lasts (it answered ok while the work leases lapsed); a bus without a server is not checked', async (t) => {
  const { deps } = parts();
  let connected = true;
  const health = createHealth({ ...deps, bus: { connected: () => connected } });
  t.deepEqual(
    (await health.report()).checks.find((c) => c.name === 'bus'),
    { name: 'bus', status: 'ok', reason: null },
  );
  connected = false;
  const lost = await health.report();
  t.is(lost.status, 'degraded');
  t.like(
    lost.checks.find((c) => c.name === 'bus'),
    { status: 'degraded' },
  );
  t.regex(lost.checks.find((c) => c.name === 'bus')?.reason ?? '', /connection to NATS is lost/);
  connected = true;
  t.is((await health.report()).status, 'ok');
  const inProcess = await createHealth({ ...deps, bus: {} }).report();
  t.false(inProcess.checks.some((c) => c.name === 'bus'));
});
