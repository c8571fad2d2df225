import test, { type ExecutionContext } from 'ava';
import { getAddress, type Address } from 'viem';
import type { Weir } from '../../src/app/start-weir.ts';
import { TRON_LOCAL_CHAIN_ID } from '../../src/chain-ingest/tron/networks.ts';
import { createUser } from '../../src/tenancy/create-user.ts';
import { apiClient } from '../support/api-client.ts';
import {
  chromiumPerFile,
  expectAccessible,
  newPage,
  recoverOnPage,
  screenshot,
  signIn,
  watchPage,
} from '../support/dashboard.ts';
import { startDevnetWeir } from '../support/devnet-weir.ts';
import { devnetPayer, merchantWallet } from '../support/evm-devnet.ts';
import { startTronWeir, txIdOf } from '../support/tron-weir.ts';
import { ADMIN_TOKEN } from '../support/weir-harness.ts';

/*
 * The session page's "Recover" on a real chain, and the recovery page on the local Tron: the
 * payment is made while no follower runs, so only a recovery by its hash can credit it (the test
 * rail of the other dashboard tests has no chain to look a hash up on).
 */
const browser = chromiumPerFile(test);

type Session = {
  id: string;
  status: string;
  amountReceived: string;
  addresses: { paymentAddress: string }[];
  paymentIntent: { transactions: { transactionHash: string; status: string }[] };
};

/**
 * An organization on `weir` with its merchant wallet on `chainId` and one open session of
 * `unitAmount` `currency`; `signInOwner` makes its owner and signs them in on a new page.
 */
async function shopWithSession(
  t: ExecutionContext,
  weir: Pick<Weir, 'url' | 'commands'>,
  shop: { name: string; chainId: number; merchant: string; currency: string; unitAmount: string },
) {
  const created = (
    await apiClient(weir.url, ADMIN_TOKEN).post<{ organizationId: string; testSecretKey: string }>(
      '/admin/organizations',
      { name: shop.name },
    )
  ).body;
  const api = apiClient(weir.url, created.testSecretKey);
  const wallet = await api.post('/api/v1/organization/withdrawal-addresses', {
    chainId: shop.chainId,
    address: shop.merchant,
    name: 'treasury',
  });
  t.is(wallet.status, 200, JSON.stringify(wallet.body));
  const { currency, unitAmount } = shop;
  const session = (
    await api.post<Session>('/api/v1/checkout/sessions', {
      successUrl: 'https://shop.example/ok',
      lineItems: { data: [{ priceData: { currency, unitAmount, productData: { name: 'Goods' } }, quantity: 1 }] },
    })
  ).body;
  const signInOwner = async () => {
    const email = 'owner@shop.example';
    const password = 'correct horse battery staple';
    await createUser(weir.commands, {
      organizationId: created.organizationId,
      email,
      role: 'owner',
      password,
      actor: 'cli',
    });
    const page = await newPage(t, browser());
    const problems = await watchPage(page);
    await signIn(page, weir.url, { email, password });
    return { page, problems };
  };
  return { api, session, signInOwner };
}

test('Checkout sessions: a payment the follower missed is recovered from the session page by its hash; the session completes once', async (t) => {
  const { devnet, weir } = await startDevnetWeir(t, { confirmations: 2, overrides: { evmFollowers: false } });
  const { api, session, signInOwner } = await shopWithSession(t, weir, {
    name: 'Harbour Coffee Roasters',
    chainId: devnet.info.chainId,
    merchant: merchantWallet(devnet.info),
    currency: 'usdc',
    unitAmount: '1200000000',
  });
  const paid = await devnetPayer(devnet.info).payToken(
    devnet.info.contracts.usdc,
    getAddress(session.addresses[0]!.paymentAddress) as Address,
    12_000_000n,
  );
  await devnet.mine(2);
  t.is((await api.get<Session>(`/api/v1/checkout/sessions/${session.id}`)).body.status, 'open', 'nothing follows');

  const { page, problems } = await signInOwner();
  await page.goto(`${weir.url}/dashboard/checkout-sessions/${session.id}`);
  await page.getByLabel('Network').selectOption({ value: String(devnet.info.chainId) });
  await page.getByLabel('Transaction hash').fill(paid.hash);
  await Promise.all([page.waitForURL(/done=recovered/), page.getByRole('button', { name: 'Recover' }).click()]);
  await page.getByText('The payment is found and credited to this session.').waitFor();
  // A live refresh (the session moving on) redraws the body, not what the action said.
  await Promise.all([
    page.waitForResponse((r) => new URL(r.url()).pathname === `/dashboard/checkout-sessions/${session.id}` && r.ok()),
    page.evaluate("document.body.dispatchEvent(new Event('weir:checkout-sessions'))"),
  ]);
  await page.locator('#session-detail').waitFor();
  t.true(await page.getByText('The payment is found and credited to this session.').isVisible(), 'still said');
  t.regex((await page.locator('#transactions').textContent()) ?? '', /12\.00 USDC.*Confirmed/s);
  t.regex(
    (await page.locator('#payment-intent').textContent()) ?? '',
    /Paying with\s*USDC on .+ \(paid without choosing on the page\)/,
    'the payment tells what it was paid with',
  );
  await expectAccessible(t, page, 'checkout-session-recovered');
  await screenshot(t, page, 'checkout-session-recovered');

  const after = (await api.get<Session>(`/api/v1/checkout/sessions/${session.id}`)).body;
  t.is(after.status, 'complete');
  t.is(after.amountReceived, '1200000000');
  t.deepEqual(
    after.paymentIntent.transactions.map((x) => [x.transactionHash, x.status]),
    [[paid.hash, 'confirmed']],
  );
  const events = await weir.eventStore.readStream(`checkout_session-${session.id}`);
  // Credited as the follower would have: through the matcher, once.
  t.deepEqual(
    events.map((e) => e.type).filter((type) => type === 'PaymentDetected' || type === 'PaymentConfirmed'),
    ['PaymentDetected', 'PaymentConfirmed'],
  );
  t.deepEqual(problems(), [], 'no console error or CSP violation');
});

test('Recovery: a TRX payment the follower missed is recovered by its Tron id (no 0x) on the recovery page; the session completes once', async (t) => {
  const w = await startTronWeir(t, { finalizedDepth: 2, overrides: { tronFollowers: false } });
  const { api, session, signInOwner } = await shopWithSession(t, w.weir, {
    name: 'Tron Tea House',
    chainId: TRON_LOCAL_CHAIN_ID,
    merchant: w.merchant,
    currency: 'trx',
    unitAmount: '500000000',
  });
  const paid = await w.payer().payTrx(session.addresses[0]!.paymentAddress, 5_000_000n);
  await w.mine(2);

  const { page, problems } = await signInOwner();
  const outcome = await recoverOnPage(page, w.weir.url, TRON_LOCAL_CHAIN_ID, paid.hash.slice(2));
  t.regex(outcome, /Complete Payment/);
  t.regex(outcome, new RegExp(session.id));
  await expectAccessible(t, page, 'recovery-tron');

  const after = (await api.get<Session>(`/api/v1/checkout/sessions/${session.id}`)).body;
  t.is(after.status, 'complete');
  t.deepEqual(
    after.paymentIntent.transactions.map((x) => [x.transactionHash, x.status]),
    [[txIdOf(paid.hash), 'confirmed']],
    'the API names it as Tron does: the bare txID',
  );
  t.deepEqual(problems(), [], 'no console error or CSP violation');
});
