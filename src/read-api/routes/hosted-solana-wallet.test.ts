import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import Koa from 'koa';
import { paymentFixture, sessionFixture } from '../../../machines/checkout-session.fixture.ts';
import type { CheckoutSession, SessionAddress } from '../../../machines/checkout-session.types.ts';
import type { PayTransactionRequest } from '../../chain-ingest/solana/pay-transaction.ts';
import { SOLANA_DEVNET_CHAIN_ID } from '../../chain-ingest/solana/networks.ts';
import { renderSolanaWalletActions } from '../../hosted/solana-wallet-actions.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from '../../projections/collections.ts';
import { createEmbeddedReadStore } from '../../read-store/embedded-read-store.ts';
import { createManualClock } from '../../shared/clock.ts';
import type { ApiState } from '../api-context.ts';
import { errorMiddleware, jsonBodyMiddleware } from '../middleware.ts';
import { hostedSolanaWalletRoutes } from './hosted-solana-wallet.ts';

const MERCHANT = 'HN7cABqLq46Es1jh92dQQisAq662SmxELLLsHHe4YWrH';
const PAYER = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin';
const REFERENCE = 'Fg6PaFpoGXkYsidMpWTK6W2BeZ7FEfcYkg476zPFsLnS';

/** Devnet USDC, paid straight to the merchant's wallet with the session's reference. */
const solanaUsdc: SessionAddress = {
  id: 'addr-sol-usdc',
  checkoutSessionId: sessionFixture().id,
  network: 'solana-devnet',
  asset: {
    id: 'solana-devnet:usdc',
    name: 'USD Coin',
    symbol: 'USDC',
    currency: 'usdc',
    chainId: SOLANA_DEVNET_CHAIN_ID,
    address: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU',
    decimals: 6,
  },
  paymentAddress: REFERENCE,
  merchantAddress: MERCHANT,
  gas: '0',
  gasAmount: '0',
};

/** 1 USDC of the 3 confirmed (at 00:10): the session is incomplete, waiting for the rest. */
const partlyPaid = (): CheckoutSession =>
  sessionFixture({
    status: 'incomplete',
    amountReceived: '100000000',
    addresses: [solanaUsdc],
    payments: [
      {
        ...paymentFixture('t1', '100000000'),
        status: 'confirmed',
        detectedAt: '2026-01-01T00:10:00.000Z',
        confirmedAt: '2026-01-01T00:11:00.000Z',
        late: false,
      },
    ],
  });

/** The route on a server of its own at `now`, with a read store holding `session` and a builder that records what it was asked. */
async function route(t: ExecutionContext, session: CheckoutSession, now: string) {
  const readStore = createEmbeddedReadStore();
  await readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).put({ _id: session.id, ...session });
  const built: PayTransactionRequest[] = [];
  const app = new Koa<ApiState>();
  app.silent = true;
  app.use(errorMiddleware());
  app.use(jsonBodyMiddleware());
  const router = hostedSolanaWalletRoutes({
    readStore,
    clock: createManualClock(Date.parse(now)),
    solanaPay: async (request) => {
      built.push(request);
      return { transaction: 'AQ==', chain: 'solana:devnet' };
    },
  });
  app.use(router.routes());
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/checkout/${session.id}/solana-transaction`;
  const pay = async () => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ assetId: solanaUsdc.id, account: PAYER }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  return { pay, built };
}

test('a partly paid session past its expiresAt (it waits for the rest) gets the transfer of what is left from its Solana wallet button', async (t) => {
  const session = partlyPaid();
  t.true(renderSolanaWalletActions(session).includes('Pay with a Solana wallet'), 'the page draws the button');
  // An hour after expiresAt (01:00).
  const { pay, built } = await route(t, session, '2026-01-01T02:00:00.000Z');
  const answer = await pay();
  t.is(answer.status, 200, JSON.stringify(answer.body));
  t.deepEqual(answer.body, { transaction: 'AQ==', chain: 'solana:devnet' });
  t.is(built.length, 1);
  t.like(built[0], { amount: 2_000_000n, recipient: MERCHANT, reference: REFERENCE, account: PAYER });
});

test('an open session past its expiresAt, or one that is over, is refused: session_not_open, nothing built', async (t) => {
  const cases: [string, CheckoutSession][] = [
    ['open, expired by the clock', sessionFixture({ addresses: [solanaUsdc] })],
    ['complete', sessionFixture({ status: 'complete', addresses: [solanaUsdc] })],
  ];
  for (const [what, session] of cases) {
    const { pay, built } = await route(t, session, '2026-01-01T01:00:00.000Z');
    const answer = await pay();
    t.is(answer.status, 403, what);
    t.like(answer.body, { code: 'session_not_open' }, what);
    t.is(built.length, 0, what);
  }
});
