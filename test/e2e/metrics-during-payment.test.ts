import test from 'ava';
import { getAddress, type Address } from 'viem';
import { EXPIRY_TIMER } from '../../src/projections/checkout-sessions.projection.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { eventually } from '../support/api-client.ts';
import { startDevnetWeir } from '../support/devnet-weir.ts';
import { devnetPayer } from '../support/evm-devnet.ts';
import { holdableReadStore } from '../support/faulty-read-store.ts';
import { type Scrape, scrapeMetrics } from '../support/metrics-scrape.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';

type Session = {
  id: string;
  status: string;
  addresses: { asset: { currency: string }; paymentAddress: string }[];
  sweeps: unknown[];
};

const NETWORK = { network: 'devnet' };

/**
 * One real USDC payment on the devnet, scraped all along. Each gauge is caught above zero at a
 * moment the test holds on purpose (a node refusing eth_getLogs, read models held, a webhook
 * answered 500, a sweep batched on the manual clock), so none is left to a lucky scrape.
 */
test('during a real payment on the devnet, every metric family /metrics exports moves', async (t) => {
  const clock = createManualClock(Date.now());
  const readStore = holdableReadStore();
  let refuseGetLogs = false;
  const { devnet, weir, organization } = await startDevnetWeir(t, {
    refuseRpc: (call) =>
      refuseGetLogs && call.method === 'eth_getLogs' ? { code: -32005, message: 'limit exceeded' } : undefined,
    overrides: { clock, wrapReadStore: readStore.wrap, sweepBatchDelayMs: 60_000 },
  });
  // Teardowns run last first: a test that fails while the writes are held lets them go before Weir stops.
  t.teardown(() => readStore.release());
  const { api } = await organization('Metrics Shop');
  // The first webhook request is answered 500: its delivery waits for a retry on the manual clock.
  const receiver = await startWebhookReceiver((_request, index) => (index === 0 ? 500 : 200));
  t.teardown(() => receiver.close());
  t.is(
    (
      await api.post('/api/v1/webhook-endpoints', {
        description: 'metrics',
        url: receiver.url,
        enabledEvents: { events: ['*'] },
      })
    ).status,
    200,
  );
  const create = async (extra: Record<string, unknown> = {}) => {
    const created = await api.post<Session>('/api/v1/checkout/sessions', {
      successUrl: 'https://shop.example/ok',
      lineItems: {
        data: [{ priceData: { currency: 'usdc', unitAmount: '100000000', productData: { name: 'Tea' } }, quantity: 1 }],
      },
      ...extra,
    });
    t.is(created.status, 200, JSON.stringify(created.body));
    return created.body;
  };
  const paid = await create();
  // Expires two minutes ahead on the manual clock (the paid one in an hour).
  const expiring = await create({ expiresAt: new Date(clock.now() + 2 * 60_000).toISOString() });
  const get = async (id: string) => (await api.get<Session>(`/api/v1/checkout/sessions/${id}`)).body;

  const scrape = () => scrapeMetrics(weir.url);
  /** Scrapes until `holds` is true of one scrape, and answers that scrape. */
  const until = (what: string, holds: (scrape: Scrape) => boolean) =>
    eventually(async () => {
      const now = await scrape();
      return holds(now) ? now : undefined;
    }, what);
  const before = await scrape();

  // The node refuses eth_getLogs: the next block is heard of but not read.
  refuseGetLogs = true;
  await devnet.mine(1);
  const nodeFailing = await until(
    'an RPC error and a block behind',
    (s) =>
      s.value('weir_follower_rpc_errors_total', { ...NETWORK, kind: 'rejected' }) >
        before.value('weir_follower_rpc_errors_total', { ...NETWORK, kind: 'rejected' }) &&
      s.value('weir_follower_head_lag_blocks', NETWORK) >= 1,
  );
  clock.advanceBy(10_000);
  const followerBehind = await until(
    'the follower 10 s behind',
    (s) => s.value('weir_follower_head_lag_seconds', NETWORK) >= 10,
  );
  refuseGetLogs = false;
  await until('the follower caught up again', (s) => s.value('weir_follower_head_lag_blocks', NETWORK) === 0);

  // The read models are held while the payment comes in: the log runs ahead of them, and the
  // matcher waits for them with the transfer in hand (its queue is not empty).
  readStore.hold();
  const usdc = devnet.info.contracts.usdc;
  const depositAddress = getAddress(paid.addresses.find((a) => a.asset.currency === 'usdc')!.paymentAddress) as Address;
  await devnetPayer(devnet.info).payToken(usdc, depositAddress, 1_000_000n);
  const held = await until(
    'the read models behind, the matcher holding the transfer',
    (s) => s.value('weir_projection_lag_positions') > 0 && s.value('weir_matcher_queue_depth', NETWORK) >= 1,
  );
  // Three minutes on: the second session's expiry is due, and waits for the matcher to drain.
  clock.advanceBy(3 * 60_000);
  const timerDue = await until(
    'the expiry due and the oldest unread event three minutes old',
    (s) => s.value('weir_timers_due') >= 1 && s.value('weir_projection_lag_seconds') >= 180,
  );
  readStore.release();

  await eventually(async () => ((await get(paid.id)).status === 'complete' ? true : undefined), 'the payment');
  await eventually(async () => ((await get(expiring.id)).status === 'expired' ? true : undefined), 'the expiry');
  // The sweep waits a minute of the manual clock for a batch, a failed webhook 30 s for its retry.
  const waiting = await until(
    'a deposit waiting for its sweep, a delivery for its retry',
    (s) =>
      s.value('weir_sweeps_pending', NETWORK) >= 1 &&
      s.value('weir_webhook_attempts_total', { outcome: 'retrying' }) >= 1 &&
      s.value('weir_webhook_queue_depth', { state: 'queued' }) >= 1,
  );
  clock.advanceBy(60_000);
  await eventually(async () => ((await get(paid.id)).sweeps.length === 1 ? true : undefined), 'the sweep');
  // The delivery answered 500 comes again, and is answered 200.
  await receiver.waitFor((all) => all.filter((r) => r.body === all[0]!.body).length === 2);
  const after = await until(
    'the sweep and the retried delivery counted',
    (s) =>
      s.value('weir_sweep_transactions_total', { ...NETWORK, outcome: 'swept' }) >= 1 &&
      s.value('weir_webhook_queue_depth') === 0,
  );

  const rose = (name: string, labels?: Record<string, string>) =>
    t.true(after.value(name, labels) > before.value(name, labels), `${name} ${JSON.stringify(labels ?? {})} rose`);
  const seen = (scrape: Scrape, name: string, labels: Record<string, string> | undefined, atLeast: number) =>
    t.true(scrape.value(name, labels) >= atLeast, `${name} ${JSON.stringify(labels ?? {})} reached ${atLeast}`);

  // HTTP requests by route and status, with their latencies.
  const sessionRead = { method: 'GET', route: '/api/v1/checkout/sessions/:id', status: '200' };
  rose('weir_http_request_duration_seconds_count', sessionRead);
  rose('weir_http_request_duration_seconds_sum', sessionRead);
  rose('weir_http_request_duration_seconds_count', { route: '/metrics', status: '200' });
  // Events appended by type.
  rose('weir_events_appended_total', { type: 'PaymentDetected' });
  rose('weir_events_appended_total');
  // Projection lag, in positions and seconds, and the log head beside it.
  seen(held, 'weir_projection_lag_positions', undefined, 1);
  seen(timerDue, 'weir_projection_lag_seconds', undefined, 180);
  t.is(after.value('weir_projection_lag_positions'), 0, 'caught up again');
  rose('weir_log_head_position');
  rose('weir_projection_position');
  // Follower: head, lag in blocks and seconds, RPC errors.
  rose('weir_follower_head_block', NETWORK);
  rose('weir_follower_processed_block', NETWORK);
  seen(nodeFailing, 'weir_follower_head_lag_blocks', NETWORK, 1);
  seen(followerBehind, 'weir_follower_head_lag_seconds', NETWORK, 10);
  rose('weir_follower_rpc_errors_total', NETWORK);
  rose('weir_follower_rpc_requests_total', { ...NETWORK, method: 'eth_getLogs' });
  rose('weir_follower_published_total', { ...NETWORK, type: 'transfer' });
  // Matcher queue.
  seen(held, 'weir_matcher_queue_depth', NETWORK, 1);
  t.is(after.value('weir_matcher_queue_depth', NETWORK), 0);
  rose('weir_matcher_messages_handled_total');
  // Webhook queue and attempts by outcome.
  seen(waiting, 'weir_webhook_queue_depth', { state: 'queued' }, 1);
  rose('weir_webhook_attempts_total', { outcome: 'retrying' });
  rose('weir_webhook_attempts_total', { outcome: 'succeeded' });
  // Timers due and late: the expiry acted a minute after its time.
  seen(timerDue, 'weir_timers_due', undefined, 1);
  t.is(after.value('weir_timers_due'), 0);
  rose('weir_timer_lateness_seconds_count', { kind: EXPIRY_TIMER });
  t.true(
    after.value('weir_timer_lateness_seconds_sum', { kind: EXPIRY_TIMER }) -
      before.value('weir_timer_lateness_seconds_sum', { kind: EXPIRY_TIMER }) >=
      60,
  );
  rose('weir_timers_fired_total', { kind: EXPIRY_TIMER, outcome: 'recorded' });
  // Sweeps and gas.
  seen(waiting, 'weir_sweeps_pending', NETWORK, 1);
  t.is(after.value('weir_sweeps_pending', NETWORK), 0);
  rose('weir_sweep_transactions_total', { ...NETWORK, outcome: 'swept' });
  rose('weir_sweep_deposits_swept_total', NETWORK);
  rose('weir_sweep_gas_used_total', NETWORK);
  rose('weir_sweep_gas_cost_wei_total', NETWORK);
});
