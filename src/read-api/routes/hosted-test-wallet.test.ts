import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import Koa from 'koa';
import type { Hash } from 'viem';
import { paymentFixture, sessionFixture } from '../../../machines/checkout-session.fixture.ts';
import type { CheckoutSession, SessionAddress } from '../../../machines/checkout-session.types.ts';
import type { DevnetInfo } from '../../chain-ingest/evm/devnet/devnet-info.ts';
import { devnetAccountFixture, devnetInfoFixture } from '../../chain-ingest/evm/devnet/devnet-info.fixture.ts';
import { evmToTron } from '../../chain-ingest/tron/address.ts';
import { TRON_LOCAL_CHAIN_ID } from '../../chain-ingest/tron/networks.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from '../../projections/collections.ts';
import { createEmbeddedReadStore } from '../../read-store/embedded-read-store.ts';
import { createManualClock } from '../../shared/clock.ts';
import type { ApiState } from '../api-context.ts';
import { errorMiddleware, jsonBodyMiddleware } from '../middleware.ts';
import { hostedTestWalletRoutes, type TestPayment } from './hosted-test-wallet.ts';

const DEVNET: DevnetInfo = devnetInfoFixture([devnetAccountFixture(3, 'payer')]);

const DEPOSIT = '0x00000000000000000000000000000000000D3B05';
/** A devnet USDC deposit address, chosen on the page (3 USDC due). */
const devnetUsdc: SessionAddress = {
  id: 'addr-devnet-usdc',
  checkoutSessionId: sessionFixture().id,
  network: 'devnet',
  asset: {
    id: 'devnet:usdc',
    name: 'Test USD Coin',
    symbol: 'USDC',
    currency: 'usdc',
    chainId: 31337,
    address: DEVNET.contracts.usdc,
    decimals: 6,
  },
  paymentAddress: DEPOSIT,
  merchantAddress: '0x5eA1fEE5eA1fEE5eA1fEE5eA1fEE5eA1fEE5eA1f',
  gas: '0',
  gasAmount: '0',
};

const chosen = (address: SessionAddress, overrides: Partial<CheckoutSession> = {}): CheckoutSession => {
  const base = sessionFixture({ addresses: [address, ...sessionFixture().addresses] });
  return {
    ...base,
    paymentIntent: {
      ...base.paymentIntent,
      paymentMethod: {
        id: address.id,
        type: 'wallet',
        accountAddress: address.paymentAddress,
        asset: address.asset,
        amountDue: '3000000',
        options: {
          wallet: { assetId: address.asset.id, transactionHash: null, contractAddress: address.asset.address },
        },
      },
    },
    ...overrides,
  };
};

/** The route on a server of its own, with a read store holding `session` and a sender that records instead of sending. */
async function route(
  t: ExecutionContext,
  session: CheckoutSession,
  devnet: DevnetInfo | null = DEVNET,
  tronDevnet: DevnetInfo | null = null,
) {
  const readStore = createEmbeddedReadStore();
  const sessions = readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
  await sessions.put({ _id: session.id, ...session });
  const sent: TestPayment[] = [];
  /** The chain each payment was sent on. */
  const chains: number[] = [];
  let hashes = 0;
  const app = new Koa<ApiState>();
  app.silent = true;
  app.use(errorMiddleware());
  app.use(jsonBodyMiddleware());
  const router = hostedTestWalletRoutes({
    readStore,
    clock: createManualClock(Date.parse('2026-01-01T00:05:00Z')),
    devnet,
    tronDevnet,
    sendTestPayment: async (on, payment) => {
      sent.push(payment);
      chains.push(on.chainId);
      hashes += 1;
      return `0x${hashes.toString(16).padStart(64, '0')}` as Hash;
    },
  });
  app.use(router.routes());
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/checkout/${session.id}/test-payment`;
  const pay = async (body: unknown = {}) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const update = (next: CheckoutSession) => sessions.put({ _id: next.id, ...next });
  return { pay, sent, chains, update };
}

test('the test wallet pays what is left of the chosen devnet asset, once, and nothing when nothing is left', async (t) => {
  // 1 USDC of 3 already seen (pending): 2 USDC are left.
  const partly = chosen(devnetUsdc, {
    payments: [
      {
        ...paymentFixture('t1', '100000000'),
        status: 'pending',
        detectedAt: '2026-01-01T00:01:00.000Z',
        confirmedAt: null,
        late: false,
      },
    ],
  });
  const { pay, sent, update } = await route(t, partly);
  const first = await pay({ assetId: 'devnet:usdc' });
  t.is(first.status, 200, JSON.stringify(first.body));
  t.like(first.body, { amountRaw: '2000000', to: DEPOSIT, assetId: 'devnet:usdc', chainId: 31337 });
  t.deepEqual(sent, [{ to: DEPOSIT, token: DEVNET.contracts.usdc, amount: 2_000_000n }]);

  // A second click before the follower saw the first payment sends nothing.
  const again = await pay();
  t.is(again.status, 409);
  t.like(again.body, { code: 'test_payment_pending' });

  // Once it is seen, nothing is left to pay.
  await update({
    ...partly,
    payments: [
      ...partly.payments,
      {
        ...paymentFixture('t2', '200000000'),
        transactionHash: first.body.transactionHash as string,
        status: 'pending',
        detectedAt: '2026-01-01T00:02:00.000Z',
        confirmedAt: null,
        late: false,
      },
    ],
  });
  const done = await pay();
  t.is(done.status, 409);
  t.like(done.body, { code: 'nothing_due' });
  t.is(sent.length, 1);
});

test('a partly paid session past its expiresAt (it never expires: it waits for the rest) is paid what is left', async (t) => {
  // 1 USDC of 3 confirmed; the route's clock (00:05) is past this session's expiresAt (00:04).
  const partly = chosen(devnetUsdc, {
    status: 'incomplete',
    expiresAt: '2026-01-01T00:04:00.000Z',
    amountReceived: '100000000',
    payments: [
      {
        ...paymentFixture('t1', '100000000'),
        status: 'confirmed',
        detectedAt: '2026-01-01T00:01:00.000Z',
        confirmedAt: '2026-01-01T00:02:00.000Z',
        late: false,
      },
    ],
  });
  const { pay, sent } = await route(t, partly);
  const answer = await pay();
  t.is(answer.status, 200, JSON.stringify(answer.body));
  t.deepEqual(sent, [{ to: DEPOSIT, token: DEVNET.contracts.usdc, amount: 2_000_000n }]);
});

test('a native coin is sent as value', async (t) => {
  const eth: SessionAddress = {
    ...devnetUsdc,
    id: 'addr-devnet-eth',
    asset: { ...devnetUsdc.asset, id: 'devnet:eth', symbol: 'ETH', currency: 'eth', address: 'native', decimals: 18 },
  };
  const { pay, sent } = await route(t, chosen(eth));
  t.is((await pay()).status, 200);
  t.deepEqual(sent, [{ to: DEPOSIT, token: null, amount: 3n * 10n ** 18n }]);
});

test('on the local Tron, the test wallet pays from its devnet: T… deposit and token turned into 0x for the node, answered in T… form', async (t) => {
  const tronDevnet: DevnetInfo = { ...DEVNET, chainId: TRON_LOCAL_CHAIN_ID, rpcUrl: 'http://127.0.0.1:2' };
  const tronUsdt: SessionAddress = {
    ...devnetUsdc,
    id: 'addr-tron-usdt',
    network: 'tron-local',
    asset: {
      ...devnetUsdc.asset,
      id: 'tron-local:usdt',
      symbol: 'USDT',
      currency: 'usdt',
      chainId: TRON_LOCAL_CHAIN_ID,
      address: evmToTron(DEVNET.contracts.usdt),
    },
    paymentAddress: evmToTron(DEPOSIT),
  };
  const { pay, sent, chains } = await route(t, chosen(tronUsdt), DEVNET, tronDevnet);
  const answer = await pay();
  t.is(answer.status, 200, JSON.stringify(answer.body));
  t.like(answer.body, {
    to: evmToTron(DEPOSIT),
    from: evmToTron(DEVNET.accounts[0]!.address),
    assetId: 'tron-local:usdt',
    chainId: TRON_LOCAL_CHAIN_ID,
    amountRaw: '3000000',
  });
  t.deepEqual(sent, [{ to: DEPOSIT, token: DEVNET.contracts.usdt, amount: 3_000_000n }]);
  t.deepEqual(chains, [TRON_LOCAL_CHAIN_ID]);
  // Without the local Tron, its asset is refused (the EVM devnet alone is not enough).
  const without = await route(t, chosen(tronUsdt), DEVNET, null);
  t.like((await without.pay()).body, { code: 'test_wallet_unavailable' });
  t.is(without.sent.length, 0);
});

test('refused, with nothing sent: a live session (404), no devnet, another chain, a session that is over, no asset chosen', async (t) => {
  const cases: [string, CheckoutSession, DevnetInfo | null, number, string][] = [
    ['live', chosen(devnetUsdc, { environment: 'live' }), DEVNET, 404, 'resource_missing'],
    ['no devnet', chosen(devnetUsdc), null, 403, 'test_wallet_unavailable'],
    ['another chain', chosen(sessionFixture().addresses[0]!), DEVNET, 403, 'test_wallet_unavailable'],
    ['complete', chosen(devnetUsdc, { status: 'complete' }), DEVNET, 403, 'session_not_open'],
    [
      'expired by the clock',
      chosen(devnetUsdc, { expiresAt: '2026-01-01T00:04:00.000Z' }),
      DEVNET,
      403,
      'session_not_open',
    ],
    ['nothing chosen', sessionFixture({ addresses: [devnetUsdc] }), DEVNET, 400, 'payment_method_missing'],
  ];
  for (const [what, session, devnet, status, code] of cases) {
    const { pay, sent } = await route(t, session, devnet);
    const answer = await pay();
    t.is(answer.status, status, what);
    t.like(answer.body, { code }, what);
    t.true(typeof answer.body.message === 'string' && answer.body.message.length > 10, what);
    t.is(sent.length, 0, what);
  }
});
