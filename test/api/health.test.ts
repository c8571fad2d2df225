import test from 'ava';
import type { HealthReport } from '../../src/app/health.ts';
import { COLLECTIONS } from '../../src/projections/collections.ts';
import type { ReadStore } from '../../src/read-store/read-store.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { createOrganization } from '../../src/tenancy/create-organization.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import { chainPublisher, randomHash } from '../support/chain-publisher.ts';
import { faultyReadStore } from '../support/faulty-read-store.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';

/** The read store with its writes refused while `outage.on` is set, as a MongoDB read store is while its server is down. */
const withOutage =
  (outage: { on: boolean }) =>
  (store: ReadStore): ReadStore =>
    faultyReadStore(store, {
      put: () =>
        outage.on ? new Error('read store write refused: connection lost to mongodb://weir:hunter2@db') : null,
    });

test('/health: ok, then failing (503) while the read models cannot follow the log, and ok again once a retry on the clock catches up; writes work again', async (t) => {
  const clock = createManualClock(Date.parse('2026-06-01T00:00:00Z'));
  const outage = { on: false };
  const weir = await startTestWeir(t, {}, { clock, wrapReadStore: withOutage(outage) });
  const merchant = await createMerchant(weir.url);
  const anonymous = apiClient(weir.url);

  const healthy = await anonymous.get<HealthReport>('/health');
  t.is(healthy.status, 200);
  t.is(healthy.headers.get('cache-control'), 'no-store');
  t.is(healthy.body.status, 'ok');
  t.is(healthy.body.position, healthy.body.head);
  t.deepEqual(
    healthy.body.checks.map((c) => [c.name, c.status]),
    [
      ['event_store', 'ok'],
      ['projections', 'ok'],
      ['matcher', 'ok'],
      ['timers', 'ok'],
      ['webhooks', 'ok'],
    ],
  );

  // The read store goes down while something is written: the read models cannot follow.
  outage.on = true;
  const other = await createOrganization(weir.commands, 'Written during the outage');
  const failing = await eventually(async () => {
    const response = await anonymous.get<HealthReport>('/health');
    return response.status === 503 ? response : undefined;
  }, '503 from /health');
  t.is(failing.body.status, 'failing');
  t.like(failing.body.checks[1], { name: 'projections', status: 'failing' });
  t.regex(
    failing.body.checks[1]!.reason!,
    /failed to follow the log since 2026-06-01T00:00:00.000Z \(\d+ attempts?, retried on its own/,
  );
  t.false(JSON.stringify(failing.body).includes('hunter2'), 'no error text, so no credentials');

  // Back up; no new write comes, so only the runner's own retry on the clock (at most a minute after a failure) catches up.
  outage.on = false;
  clock.advanceBy(60_000);
  const recovered = await eventually(async () => {
    const response = await anonymous.get<HealthReport>('/health');
    return response.body.status === 'ok' ? response : undefined;
  }, 'ok from /health');
  t.is(recovered.status, 200);
  t.is(recovered.body.position, other.position.toString());
  t.is(
    await weir.readStore.collection(COLLECTIONS.organizations).count({ organizationId: other.organizationId }),
    2,
    'its test and live records',
  );

  // A write after the outage is answered as usual (it waits for its read models, which follow again).
  const created = await merchant.api.post<{ id: string }>('/api/v1/checkout/sessions', sessionRequest());
  t.is(created.status, 200);
  t.is((await merchant.api.get(`/api/v1/checkout/sessions/${created.body.id}`)).status, 200);
});

test('/health answers GET and HEAD only', async (t) => {
  const weir = await startTestWeir(t);
  const anonymous = apiClient(weir.url);
  t.is((await anonymous.call('HEAD', '/health')).status, 200);
  const post = await anonymous.post<{ code: string }>('/health');
  t.is(post.status, 405);
  t.is(post.headers.get('allow'), 'GET, HEAD');
  t.is(post.body.code, 'method_not_allowed');
});

test('/health: a chain message that keeps failing for a minute makes Weir degraded (still 200), naming its subject; handled, it is ok again', async (t) => {
  const clock = createManualClock(Date.parse('2026-06-01T00:00:00Z'));
  const broken = { on: false };
  const weir = await startTestWeir(
    t,
    {},
    {
      clock,
      wrapReadStore: (store) =>
        faultyReadStore(store, {
          get: (collection) =>
            broken.on && collection === COLLECTIONS.depositAddresses ? new Error('lookup failed') : null,
        }),
    },
  );
  const merchant = await createMerchant(weir.url);
  const session = (
    await merchant.api.post<{ id: string; addresses: { paymentAddress: string }[] }>(
      '/api/v1/checkout/sessions',
      sessionRequest(),
    )
  ).body;
  const anonymous = apiClient(weir.url);

  broken.on = true;
  const transfer = await chainPublisher(weir.bus).transfer({
    to: session.addresses[0]!.paymentAddress,
    amount: '3000000',
    blockNumber: 1,
    blockHash: randomHash(),
  });
  // A minute on the clock after its first failure (which comes within moments of the publish).
  const degraded = await eventually(async () => {
    clock.advanceBy(60_000);
    const response = await anonymous.get<HealthReport>('/health');
    return response.body.status === 'degraded' ? response : undefined;
  }, 'degraded');
  t.is(degraded.status, 200);
  const matcher = degraded.body.checks.find((c) => c.name === 'matcher')!;
  t.is(matcher.status, 'degraded');
  t.regex(
    matcher.reason!,
    new RegExp(
      `a chain message on chain\\.${transfer.network}\\.transfer has failed since 2026-06-01T00:0\\d:00\\.000Z \\(\\d+ deliver(y|ies); see the log\\): the later chain messages of that network wait, other networks go on`,
    ),
  );

  broken.on = false;
  await eventually(
    async () => ((await anonymous.get<HealthReport>('/health')).body.status === 'ok' ? true : undefined),
    'ok again',
  );
  const paid = await eventually(async () => {
    const s = (await merchant.api.get<{ paymentIntent: { status: string } }>(`/api/v1/checkout/sessions/${session.id}`))
      .body;
    return s.paymentIntent.status === 'processing' ? s : undefined;
  }, 'the transfer recorded');
  t.is(paid.paymentIntent.status, 'processing');
});
