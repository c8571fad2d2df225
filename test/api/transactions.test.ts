import test from 'ava';
import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import { randomHash } from '../support/chain-publisher.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { apiClient } from '../support/api-client.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { assertError, payInFull, restartableWeir, type Page, type Session } from './helpers.ts';

type Transaction = {
  id: string;
  object: string;
  type: 'incoming' | 'transfer';
  status: string;
  network: string;
  chainId: number;
  transactionHash: string;
  fromAddress: string;
  toAddress: string;
  currency: string | null;
  assetId: string | null;
  asset: { id: string; currency: string } | null;
  amountRaw: string | null;
  amount: string;
  checkoutSessionId: string;
  paymentIntentId: string;
  invoiceId: string | null;
  late?: boolean;
  logIndex?: number;
  deposits?: { transferId: string; amount: string }[];
  gasUsed?: string | null;
  gasCost?: string | null;
  reverted?: boolean;
  livemode: boolean;
  transactionUrl: string | null;
  createdAt: string;
};

test('GET /transactions lists payments and sweeps with their filters; another tenant sees none of them', async (t) => {
  const weir = await startTestWeir(t);
  const alice = await createMerchant(weir.url, 'Alice');
  const bob = await createMerchant(weir.url, 'Bob');
  const created = (await alice.api.post<Session>('/api/v1/checkout/sessions', sessionRequest())).body;
  const paid = await payInFull(weir, alice.api, created);

  const list = await alice.api.get<Page<Transaction>>('/api/v1/transactions');
  t.is(list.status, 200, JSON.stringify(list.body));
  t.is(list.body.count, 1);
  const [payment] = list.body.data;
  t.truthy(payment);
  t.is(payment!.type, 'incoming');
  t.is(payment!.object, 'transaction');
  t.is(payment!.status, 'confirmed');
  t.is(payment!.checkoutSessionId, paid.id);
  t.is(payment!.currency, 'usdc');
  t.is(payment!.amount, '300000000');
  t.regex(payment!.amountRaw!, /^[0-9]+$/);
  t.is(payment!.chainId, 7357);
  t.is(payment!.late, false);
  t.is(payment!.livemode, false);
  t.is(typeof payment!.logIndex, 'number');
  // The test network is a local chain: it has no explorer, so no link (its placeholder leads nowhere).
  t.is(payment!.transactionUrl, null);
  t.false('_id' in payment! || 'environment' in payment!);

  // A sweep of that deposit: broadcast, then mined.
  const session = (await weir.readStore.collection('checkout_sessions').get(paid.id)) as unknown as {
    payments: { transferId: string; network: string; chainId: number }[];
  };
  const transfer = session.payments[0]!;
  const hash = randomHash();
  const ctx = { organizationId: alice.organizationId, environment: 'test' as const, actor: 'system:sweeper' };
  await weir.commands.handle(
    checkoutSessionAggregate,
    paid.id,
    {
      type: 'RecordSweepBroadcast',
      broadcast: {
        network: transfer.network,
        chainId: transfer.chainId,
        transactionHash: hash,
        transferIds: [transfer.transferId],
        share: { index: 0, count: 1 },
      },
    },
    ctx,
  );
  await weir.projections.waitFor((await weir.eventStore.headPosition())!);
  const broadcast = (await alice.api.get<Page<Transaction>>('/api/v1/transactions?type=transfer')).body;
  t.is(broadcast.count, 1);
  t.is(broadcast.data[0]!.status, 'broadcast');
  t.is(broadcast.data[0]!.amount, '300000000');
  t.is(broadcast.data[0]!.toAddress, '0x5Ea1Fee5EA1fEe5EA1feE5EA1Fee5Ea1Fee5Ea1F');

  await weir.commands.handle(
    checkoutSessionAggregate,
    paid.id,
    {
      type: 'RecordSweep',
      sweep: {
        network: transfer.network,
        chainId: transfer.chainId,
        transactionHash: hash,
        transferIds: [transfer.transferId],
        gasUsed: '65000',
        gasCost: '1300000000000',
      },
    },
    ctx,
  );
  await weir.projections.waitFor((await weir.eventStore.headPosition())!);
  const swept = (
    await alice.api.get<Page<Transaction>>(
      `/api/v1/transactions?transactionHash=${hash.toUpperCase().replace('0X', '0x')}`,
    )
  ).body;
  t.is(swept.count, 1);
  const sweep = swept.data[0]!;
  t.is(sweep.type, 'transfer');
  t.is(sweep.status, 'swept');
  t.is(sweep.gasUsed, '65000');
  t.is(sweep.gasCost, '1300000000000');
  t.false(sweep.reverted);
  t.deepEqual(
    sweep.deposits!.map((d) => d.transferId),
    [transfer.transferId],
  );
  t.is(sweep.fromAddress.toLowerCase(), payment!.toAddress.toLowerCase());

  // Filters.
  const count = async (query: string) =>
    (await alice.api.get<Page<Transaction>>(`/api/v1/transactions?${query}`)).body.count;
  t.is(await count(''), 2);
  t.is(await count('type=incoming'), 1);
  t.is(await count('type=outgoing'), 0);
  t.is(await count('status=confirmed'), 1);
  t.is(await count('status=swept'), 1);
  t.is(await count('chainId=7357'), 2);
  t.is(await count('chainId=1'), 0);
  t.is(await count('currency=usdc'), 2);
  t.is(await count(`checkoutSessionId=${paid.id}`), 2);
  t.is(await count(`paymentIntentId=${payment!.paymentIntentId}`), 2);
  t.is(await count(`ids=${payment!.id}`), 1);
  t.is(await count('createdAt[gt]=2100-01-01'), 0);
  t.is(await count('limit=1'), 2);
  t.is((await alice.api.get<Page<Transaction>>('/api/v1/transactions?limit=1')).body.hasMore, true);

  // Validation names the parameter.
  for (const [query, field] of [
    ['type=refund', 'type'],
    ['status=lost', 'status'],
    ['chainId=abc', 'chainId'],
    ['transactionHash=0x12', 'transactionHash'],
    ['limit=0', 'limit'],
    ['createdAt[gt]=yesterday', 'createdAt[gt]'],
    ['late=maybe', 'late'],
  ] as const)
    assertError(t, await alice.api.get(`/api/v1/transactions?${query}`), 400, { field });

  // Another tenant: nothing, whatever it filters on.
  t.is((await bob.api.get<Page<Transaction>>('/api/v1/transactions')).body.count, 0);
  t.is((await bob.api.get<Page<Transaction>>(`/api/v1/transactions?checkoutSessionId=${paid.id}`)).body.count, 0);
  // Nor does the live environment of the same organization.
  t.is((await alice.live.get<Page<Transaction>>('/api/v1/transactions')).body.count, 0);
});

test('a network filter naming a network no longer configured lists the transactions made on it; a name with none is still a 400, where both were a 400', async (t) => {
  const clock = createManualClock(Date.now());
  const weir = await restartableWeir(t, clock);
  const first = await weir.start();
  const { api, testSecretKey } = await createMerchant(first.url);
  const other = await createMerchant(first.url, 'Other shop');
  const paid = await payInFull(
    first,
    api,
    (await api.post<Session>('/api/v1/checkout/sessions', sessionRequest())).body,
  );
  const { network } = (await api.get<Page<Transaction>>('/api/v1/transactions')).body.data[0]!;
  await first.stop();

  // Started again without the test network: its payment stays in the log and the read models.
  const second = await startTestWeir(t, { dataDir: weir.dataDir, testRail: false }, { clock });
  const again = apiClient(second.url, testSecretKey);
  t.false(
    (await again.get<Page<{ network: string }>>('/api/v1/chains')).body.data.some((c) => c.network === network),
    'no longer offered',
  );
  const filtered = await again.get<Page<Transaction>>(`/api/v1/transactions?network=${network}`);
  t.is(filtered.status, 200, JSON.stringify(filtered.body));
  t.deepEqual(
    filtered.body.data.map((tx) => [tx.network, tx.checkoutSessionId]),
    [[network, paid.id]],
  );
  assertError(t, await again.get('/api/v1/transactions?network=nope'), 400, { field: 'network' });
  // Another tenant has no transactions there: for it the name is unknown.
  const stranger = apiClient(second.url, other.testSecretKey);
  assertError(t, await stranger.get(`/api/v1/transactions?network=${network}`), 400, { field: 'network' });
});
