import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { parseDevnetInfo } from '../../src/chain-ingest/evm/devnet/devnet-info.ts';
import { evmToTron } from '../../src/chain-ingest/tron/address.ts';
import { tronDevnetAddresses } from '../../src/chain-ingest/tron/devnet/tron-devnet.ts';
import { TRON_LOCAL_CHAIN_ID } from '../../src/chain-ingest/tron/networks.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import type { ChainSession } from '../support/chain-shop.ts';
import { launchChromium, screenshotsWithAxe } from '../support/chromium.ts';
import { ADMIN_TOKEN } from '../support/weir-harness.ts';
import { spawnWeir, spawnWeirDevnet } from '../support/weir-process.ts';
import { findFreePort } from '../support/free-port.ts';
import { payTrc20WithoutFee } from '../support/tron-devnet.ts';

type Chain = { id: number; network: string; assets: { currency: string }[] };

const usdtSession = {
  successUrl: 'https://shop.example/thanks?session={CHECKOUT_SESSION_ID}',
  lineItems: { data: [{ priceData: { currency: 'usdt', unitAmount: '250000000', productData: { name: 'Mug' } } }] },
};

test("npm start's embedded chains offer a local Tron to test keys (not live): the faucet funds a new payer with TRX and test USDT, its TRC-20 payment completes a session, and the hosted page's test wallet pays another", async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-local-tron-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  // Empty is unset: the default, as `npm start` runs it.
  const weir = await spawnWeir({ dataDir, env: { WEIR_LOCAL_CHAIN: '' } });
  t.teardown(() => weir.kill());
  const devnet = parseDevnetInfo(JSON.parse(await readFile(join(dataDir, 'local-tron', 'devnet.json'), 'utf8')));
  t.is(devnet.chainId, TRON_LOCAL_CHAIN_ID);
  const { tokens, merchant } = tronDevnetAddresses(devnet);

  const created = (
    await apiClient(weir.url, ADMIN_TOKEN).post<{ testSecretKey: string; liveSecretKey: string }>(
      '/admin/organizations',
      { name: 'Local Tron Shop' },
    )
  ).body;
  const api = apiClient(weir.url, created.testSecretKey);
  const local = (await api.get<{ data: Chain[] }>('/api/v1/chains')).body.data.find(
    (c) => c.id === TRON_LOCAL_CHAIN_ID,
  );
  t.is(local?.network, 'tron-local');
  t.deepEqual(local?.assets.map((a) => a.currency).sort(), ['trx', 'usdc', 'usdt']);
  const live = (await apiClient(weir.url, created.liveSecretKey).get<{ data: Chain[] }>('/api/v1/chains')).body;
  t.false(
    live.data.some((c) => c.id === TRON_LOCAL_CHAIN_ID),
    'never to live keys',
  );
  const wallet = await api.post('/api/v1/organization/withdrawal-addresses', {
    chainId: TRON_LOCAL_CHAIN_ID,
    address: merchant,
  });
  t.is(wallet.status, 200, JSON.stringify(wallet.body));

  // A brand-new payer (T… address) gets TRX and test USDT (the default for a Tron address) from the faucet.
  const payerKey = generatePrivateKey();
  const payer = evmToTron(privateKeyToAccount(payerKey).address);
  const trx = await api.post('/api/v1/faucet', { address: payer, asset: 'trx', amount: '1000000000' });
  t.like(trx, {
    status: 200,
    body: { address: payer, asset: 'trx', amountRaw: '10000000', chainId: TRON_LOCAL_CHAIN_ID },
  });
  const usdt = await api.post('/api/v1/faucet', { address: payer });
  t.like(usdt, { status: 200, body: { asset: 'usdt', amountRaw: '100000000', chainId: TRON_LOCAL_CHAIN_ID } });
  const wrong = await api.post<{ message: string }>('/api/v1/faucet', { address: payer, asset: 'eth' });
  t.is(wrong.status, 400);
  t.regex(wrong.body.message, /trx, usdt, usdc on the local Tron/);
  // A T… address whose checksum fails is named, and nothing is sent.
  const typo = await api.post<{ message: string }>('/api/v1/faucet', {
    address: `${payer.slice(0, -1)}${payer.endsWith('1') ? '2' : '1'}`,
  });
  t.is(typo.status, 400);
  t.regex(typo.body.message, /^address: .*checksum/);

  const session = async () => {
    const s = (await api.post<ChainSession>('/api/v1/checkout/sessions', usdtSession)).body;
    return { ...s, tron: s.addresses.find((a) => a.network === 'tron-local')! };
  };
  const completed = (id: string) =>
    eventually(
      async () => {
        const s = (await api.get<ChainSession>(`/api/v1/checkout/sessions/${id}`)).body;
        return s.status === 'complete' ? s : undefined;
      },
      `session ${id} complete`,
      30_000,
    );

  // The payer pays 2.5 USDT by TRC-20 transfer; on the local Tron it holds only TRX, so it pays no fee (gas price 0).
  const first = await session();
  t.regex(first.tron.paymentAddress, /^T/);
  t.is(first.tron.asset.address, tokens.usdt);
  const receipt = await payTrc20WithoutFee(devnet, payerKey, {
    token: tokens.usdt,
    to: first.tron.paymentAddress,
    amount: 2_500_000n,
  });
  t.is(receipt.status, 'success');
  const paid = await completed(first.id);
  t.is(paid.amountReceived, '250000000');
  t.is(paid.paymentIntent.transactions[0]!.fromAddress, payer, 'in T… form');

  // The hosted page: choose USDT on the local Tron, "Pay with test wallet", end on the success URL.
  const second = await session();
  const browser = await launchChromium(t);
  const context = await browser.newContext({ viewport: { width: 390, height: 900 } });
  await context.route('https://shop.example/**', (route) =>
    route.fulfill({ status: 200, contentType: 'text/html', body: '<title>Thanks</title>Thanks' }),
  );
  const page = await context.newPage();
  await page.goto(`${weir.url}/checkout/${second.id}`);
  await page.getByRole('button', { name: /Tether.*Local Tron/ }).click();
  await page.getByRole('button', { name: 'Pay with test wallet' }).waitFor();
  await screenshotsWithAxe(t, page, 'tron-local-test-wallet');
  await page.getByRole('button', { name: 'Pay with test wallet' }).click();
  await page.waitForURL(`https://shop.example/thanks?session=${second.id}`, { timeout: 30_000 });
  const byWallet = await completed(second.id);
  t.is(byWallet.amountReceived, '250000000');
  const testPayer = devnet.accounts.filter((a) => a.role === 'payer').at(-1)!.address;
  t.is(byWallet.paymentIntent.transactions[0]!.fromAddress, evmToTron(testPayer), "the local Tron's last funded payer");
  // Ctrl-C, as `npm start` in a terminal gets it: Weir stops both its anvils (kill() says which it left).
  await weir.kill('SIGINT');
  t.is(weir.child.exitCode, 0, weir.output());
});

test('weir devnet runs a local Tron beside its chain and writes it in the devnet file; serve --devnet FILE offers it to test keys, with its faucet', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'weir-devnet-tron-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'devnet.json');
  const devnet = spawnWeirDevnet(t, ['--port', String(await findFreePort()), '--solana-port', '0', '--out', file]);
  await eventually(
    async () => (devnet.stderr().includes('local Tron running on') ? true : undefined),
    'the line',
    150_000,
  );
  const stderr = devnet.stderr();
  const info = parseDevnetInfo(JSON.parse(await readFile(file, 'utf8')));
  t.truthy(info.tron, stderr);
  t.true(stderr.includes(`local Tron running on ${info.tron!.rpcUrl}`));

  const weir = await spawnWeir({ dataDir: join(dir, 'data'), args: ['--devnet', file] });
  t.teardown(() => weir.kill());
  const created = (
    await apiClient(weir.url, ADMIN_TOKEN).post<{ testSecretKey: string }>('/admin/organizations', { name: 'Shop' })
  ).body;
  const api = apiClient(weir.url, created.testSecretKey);
  const chains = (await api.get<{ data: Chain[] }>('/api/v1/chains')).body.data.map((c) => c.id);
  t.true(chains.includes(TRON_LOCAL_CHAIN_ID), JSON.stringify(chains));
  const payer = evmToTron(privateKeyToAccount(generatePrivateKey()).address);
  const funded = await api.post('/api/v1/faucet', { address: payer, asset: 'trx' });
  t.like(funded, { status: 200, body: { address: payer, chainId: TRON_LOCAL_CHAIN_ID } });
  await weir.kill('SIGTERM');
  t.is(await devnet.stop(), 0, 'its anvils stopped with it');
});
