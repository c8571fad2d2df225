import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import test, { type ExecutionContext } from 'ava';
import type { Page } from 'playwright-core';
import { getAddress } from 'viem';
import { createJsonRpc } from '../../src/chain-ingest/evm/devnet/json-rpc.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import { launchChromium, screenshotFolder } from '../support/chromium.ts';
import { startDevnetWeir } from '../support/devnet-weir.ts';
import { devnetPayer } from '../support/evm-devnet.ts';
import { injectedWallet, type WalletWindow } from '../support/injected-wallet.ts';

type Session = {
  id: string;
  url: string;
  status: string;
  updatedAt: string;
  amountReceived: string;
  amountOverpaid: string;
  addresses: { id: string; paymentAddress: string; asset: { id: string; currency: string; address: string } }[];
  payments: { transactionHash: string; amountRaw: string; fromAddress: string }[];
};

/** A devnet, a Weir offering it, a shop on loopback to return to, and a 25 USDC checkout session. */
async function world(t: ExecutionContext, price = { currency: 'usdc', unitAmount: '2500000000' }) {
  const shop = createServer((req, res) => res.end(`thanks ${req.url}`));
  await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    shop.closeAllConnections();
    shop.close();
  });
  const shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
  const { devnet, weir, organization } = await startDevnetWeir(t);
  const { api } = await organization('Wallet Shop');
  const created = await api.post<Session>('/api/v1/checkout/sessions', {
    successUrl: `${shopUrl}/thanks?session={CHECKOUT_SESSION_ID}`,
    lineItems: {
      data: [{ priceData: { ...price, productData: { name: 'Lamp' } }, quantity: 1 }],
    },
  });
  t.is(created.status, 200, JSON.stringify(created.body));
  const session = created.body;
  const usdc = session.addresses.find((a) => a.asset.currency === price.currency)!;
  const get = async () => (await api.get<Session>(`/api/v1/checkout/sessions/${session.id}`)).body;
  const until = (predicate: (s: Session) => boolean, what: string) =>
    eventually(
      async () => {
        const s = await get();
        return predicate(s) ? s : undefined;
      },
      what,
      30_000,
    );
  const browser = await launchChromium(t);
  const page = await (await browser.newContext({ viewport: { width: 390, height: 900 } })).newPage();
  return { devnet, weir, session, usdc, get, until, page, shopUrl };
}

/** A screenshot to look at (not an assertion), kept when the test fails (see screenshotFolder). */
async function screenshot(t: ExecutionContext, page: Page, name: string) {
  await page.screenshot({ path: join(await screenshotFolder(t, 'weir-wallet-'), name), fullPage: true });
}

test('"Pay with test wallet" completes a checkout in the browser without any wallet software', async (t) => {
  const w = await world(t);
  await w.page.goto(w.session.url);
  t.is(
    await w.page.getByRole('button', { name: 'Pay with test wallet' }).count(),
    0,
    'hidden before an asset is chosen',
  );
  await w.page.getByRole('button', { name: /USDC/ }).click();
  const pay = w.page.getByRole('button', { name: 'Pay with test wallet' });
  await pay.waitFor({ state: 'visible' });
  await pay.click();
  await w.page.locator('.wallet-message[data-kind="sent"]').waitFor({ state: 'attached' });
  t.regex((await w.page.locator('.wallet-message').textContent()) ?? '', /Test payment sent: 0x[0-9a-f]{64}/);
  await screenshot(t, w.page, 'weir-wallet-test-payment-sent.png');
  await w.page.waitForURL(`${w.shopUrl}/thanks?session=${w.session.id}`, { timeout: 30_000 });

  const done = await w.until((s) => s.status === 'complete', 'completion');
  t.is(done.amountReceived, '2500000000');
  t.is(done.amountOverpaid, '0');
  t.is(done.payments.length, 1);
  t.is(done.payments[0]!.amountRaw, '25000000');
  // Paid from the devnet's last funded payer account.
  const payers = w.devnet.info.accounts.filter((a) => a.role === 'payer');
  t.is(getAddress(done.payments[0]!.fromAddress), payers.at(-1)!.address);

  // A session that is over is never paid again.
  const again = await apiClient(w.weir.url).post(`/checkout/${w.session.id}/test-payment`, {});
  t.is(again.status, 403);
  t.like(again.body, { code: 'session_not_open' });
  t.is((await w.get()).payments.length, 1);
});

test('"Connect wallet": a declined payment changes nothing; then the wallet adds and switches to the chain and pays exactly what is left after a partial payment', async (t) => {
  const w = await world(t);
  const payer = w.devnet.info.accounts.filter((a) => a.role === 'payer')[0]!.address;
  const rpc = createJsonRpc(w.devnet.info.rpcUrl);
  await w.page.exposeFunction('weirTestNode', (method: string, params: unknown[]) => rpc(method, params));
  await w.page.addInitScript({ content: injectedWallet(payer) });
  const calls = () => w.page.evaluate(() => (globalThis as unknown as WalletWindow).walletCalls.map((c) => c.method));

  await w.page.goto(w.session.url);
  await w.page.getByRole('button', { name: /USDC/ }).click();
  await w.page.locator('#reveal').waitFor({ state: 'visible' });
  const before = await w.get();
  const nonceBefore = await rpc('eth_getTransactionCount', [payer, 'latest']);

  // The payer declines in the wallet.
  await w.page.getByRole('button', { name: 'Connect wallet' }).click();
  await w.page.locator('.wallet-message[data-kind="error"]').waitFor();
  t.regex(
    (await w.page.locator('.wallet-message').textContent()) ?? '',
    /You declined the request in your wallet\. Nothing was sent/,
  );
  t.deepEqual(await calls(), [
    'eth_requestAccounts',
    'eth_chainId',
    'wallet_switchEthereumChain',
    'wallet_addEthereumChain',
    'eth_chainId',
    'wallet_switchEthereumChain',
    'eth_chainId',
    'eth_sendTransaction',
  ]);
  await screenshot(t, w.page, 'weir-wallet-declined.png');
  const axe = await new AxeBuilder({ page: w.page }).include('#wallet-actions').analyze();
  t.deepEqual(
    axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id),
    [],
    'axe-core: no serious or critical violation in the wallet actions',
  );
  const added = await w.page.evaluate(
    () =>
      (globalThis as unknown as WalletWindow).walletCalls.find((c) => c.method === 'wallet_addEthereumChain')!.params,
  );
  t.deepEqual(added, [
    {
      chainId: '0x7a69',
      chainName: 'Local Devnet',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: [w.devnet.info.rpcUrl],
    },
  ]);
  t.is(await rpc('eth_getTransactionCount', [payer, 'latest']), nonceBefore, 'no transaction was sent');
  const after = await w.get();
  t.is(after.updatedAt, before.updatedAt, 'the session is unchanged');
  t.is(after.status, 'open');
  t.deepEqual(after.payments, []);

  // 10 USDC arrive from elsewhere; the wallet is back on Ethereum and the payer now accepts.
  await devnetPayer(w.devnet.info, 1).payToken(
    getAddress(w.usdc.asset.address),
    getAddress(w.usdc.paymentAddress),
    10_000_000n,
  );
  await w.until((s) => s.status === 'incomplete', 'the partial payment');
  await w.page.evaluate(() => {
    const wallet = globalThis as unknown as WalletWindow;
    wallet.walletRejects = false;
    wallet.walletCalls = [];
    wallet.walletSwitchTo('0x1');
  });
  await w.page.getByRole('button', { name: 'Connect wallet' }).click();
  await w.page.locator('.wallet-message[data-kind="sent"]').waitFor({ state: 'attached' });
  t.regex((await w.page.locator('.wallet-message').textContent()) ?? '', /Payment sent: 0x[0-9a-f]{64}/);
  t.deepEqual(await calls(), [
    'eth_requestAccounts',
    'eth_chainId',
    'wallet_switchEthereumChain',
    'eth_chainId',
    'eth_sendTransaction',
  ]);
  const sent = await w.page.evaluate(
    () =>
      (globalThis as unknown as WalletWindow).walletCalls.find((c) => c.method === 'eth_sendTransaction')!.params as {
        to: string;
        data: string;
      }[],
  );
  // transfer(deposit address, 15 USDC): what is left, encoded by the page.
  t.is(sent[0]!.to.toLowerCase(), w.usdc.asset.address.toLowerCase());
  t.is(
    sent[0]!.data,
    `0xa9059cbb${w.usdc.paymentAddress.slice(2).toLowerCase().padStart(64, '0')}${(15_000_000).toString(16).padStart(64, '0')}`,
  );

  await w.page.waitForURL(`${w.shopUrl}/thanks?session=${w.session.id}`, { timeout: 30_000 });
  const done = await w.until((s) => s.status === 'complete', 'completion');
  t.is(done.amountReceived, '2500000000');
  t.is(done.amountOverpaid, '0');
  t.deepEqual(
    done.payments.map((p) => p.amountRaw),
    ['10000000', '15000000'],
  );
  t.is(getAddress(done.payments[1]!.fromAddress), payer);
});

test('"Connect wallet" with a wallet at window.ethereum pays a native coin as the value of the transaction', async (t) => {
  const w = await world(t, { currency: 'eth', unitAmount: '1500000' }); // 0.015 ETH
  const payer = w.devnet.info.accounts.filter((a) => a.role === 'payer')[0]!.address;
  const rpc = createJsonRpc(w.devnet.info.rpcUrl);
  await w.page.exposeFunction('weirTestNode', (method: string, params: unknown[]) => rpc(method, params));
  await w.page.addInitScript({ content: injectedWallet(payer, 'window.ethereum', false) });
  await w.page.goto(w.session.url);
  await w.page.getByRole('button', { name: /ETH/ }).click();
  await w.page.locator('#reveal').waitFor({ state: 'visible' });
  await w.page.getByRole('button', { name: 'Connect wallet' }).click();
  await w.page.locator('.wallet-message[data-kind="sent"]').waitFor({ state: 'attached' });
  const sent = await w.page.evaluate(
    () =>
      (globalThis as unknown as WalletWindow).walletCalls.find((c) => c.method === 'eth_sendTransaction')!.params as {
        to: string;
        value: string;
        data?: string;
      }[],
  );
  t.is(sent[0]!.to.toLowerCase(), w.usdc.paymentAddress.toLowerCase());
  t.is(BigInt(sent[0]!.value), 15n * 10n ** 15n);
  t.is(sent[0]!.data, undefined);
  await w.page.waitForURL(`${w.shopUrl}/thanks?session=${w.session.id}`, { timeout: 30_000 });
  t.is((await w.until((s) => s.status === 'complete', 'completion')).amountOverpaid, '0');
});
