import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { erc20Abi, getAddress, parseUnits, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createEvmWriteClients } from '../../src/chain-ingest/evm/contracts/clients.ts';
import { parseDevnetInfo, type DevnetInfo } from '../../src/chain-ingest/evm/devnet/devnet-info.ts';
import { SOLANA_LOCALNET_CHAIN_ID } from '../../src/chain-ingest/solana/networks.ts';
import { evmToTron } from '../../src/chain-ingest/tron/address.ts';
import { TRON_LOCAL_CHAIN_ID } from '../../src/chain-ingest/tron/networks.ts';
import { FAUCET_START_HINT, noFaucetReason } from '../../src/read-api/routes/faucet.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import { describe, descendantsOf } from '../support/child-processes.ts';
import { devnetPayer, merchantWallet } from '../support/evm-devnet.ts';
import { ADMIN_TOKEN } from '../support/weir-harness.ts';
import { spawnWeir } from '../support/weir-process.ts';

type Chain = { id: number; network: string; assets: { currency: string; address: string }[] };
type Session = {
  id: string;
  status: string;
  amountReceived: string;
  addresses: { paymentAddress: string; asset: { currency: string; chainId?: number } }[];
};

/** A Solana wallet address (base58, 32 bytes), as a payer on the local Solana would paste it. */
const SOLANA_PAYER = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';

const usdcSession = {
  successUrl: 'https://shop.example/ok',
  lineItems: { data: [{ priceData: { currency: 'usdc', unitAmount: '250000000', productData: { name: 'Mug' } } }] },
};

test('weir serve with WEIR_LOCAL_CHAIN=evm runs the local EVM chain alone for test keys (not live; no local Tron or Solana started or offered): faucet, a real USDC payment, and after kill -9 and restart the chain state, the payment and detection are kept', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-local-chain-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  // The EVM chain only: the default (all three, as `npm start` runs them) is readme-first-steps.test.ts's.
  const env = { WEIR_LOCAL_CHAIN: 'evm' };
  const first = await spawnWeir({ dataDir, env });
  t.teardown(() => first.kill());
  // One anvil (the local Tron runs a second one), no local Tron data dir.
  const anvils = descendantsOf(first.child.pid!).filter((p) => /anvil/.test(p.commandLine));
  // Its output says why when no anvil runs (one CI run under load found none: the cause was not printed).
  t.is(anvils.length, 1, `${describe(anvils)}\n${first.output().slice(-4000)}`);
  await t.throwsAsync(readFile(join(dataDir, 'local-tron', 'devnet.json'), 'utf8'), { code: 'ENOENT' });
  const info: DevnetInfo = parseDevnetInfo(
    JSON.parse(await readFile(join(dataDir, 'local-chain', 'devnet.json'), 'utf8')),
  );
  t.regex(info.rpcUrl, /^http:\/\/127\.0\.0\.1:\d+$/);

  const created = (
    await apiClient(first.url, ADMIN_TOKEN).post<{ testSecretKey: string; liveSecretKey: string }>(
      '/admin/organizations',
      { name: 'Local Chain Shop' },
    )
  ).body;
  let api = apiClient(first.url, created.testSecretKey);
  const chains = (await api.get<{ data: Chain[] }>('/api/v1/chains')).body.data;
  const local = chains.find((chain) => chain.id === 31337);
  t.is(local?.network, 'devnet', JSON.stringify(chains));
  t.deepEqual(local?.assets.map((asset) => asset.currency).sort(), ['dai', 'eth', 'usdc', 'usdt']);
  for (const off of [TRON_LOCAL_CHAIN_ID, SOLANA_LOCALNET_CHAIN_ID])
    t.false(
      chains.some((chain) => chain.id === off),
      `chain ${off} is not offered: ${JSON.stringify(chains)}`,
    );
  t.deepEqual(
    (await apiClient(first.url, created.liveSecretKey).get<{ data: Chain[] }>('/api/v1/chains')).body.data.map(
      (c) => c.id,
    ),
    [],
    'the live environment offers only what the operator configured: nothing here',
  );
  const added = await api.post('/api/v1/organization/withdrawal-addresses', {
    chainId: 31337,
    address: merchantWallet(info),
  });
  t.is(added.status, 200, JSON.stringify(added.body));

  // A brand-new payer gets gas and USDC from the faucet, then pays a session for real.
  const payerKey = generatePrivateKey();
  const payer = privateKeyToAccount(payerKey).address;
  for (const asset of ['eth', 'usdc']) {
    const funded = await api.post('/api/v1/faucet', { address: payer, asset, amount: '1000000000' });
    t.is(funded.status, 200, JSON.stringify(funded.body));
  }
  // A Tron address is answered plainly: the local Tron is not running here.
  const tronFunded = await api.post<{ code: string; message: string }>('/api/v1/faucet', {
    address: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7',
  });
  t.like(tronFunded, { status: 400, body: { code: 'faucet_unavailable' } });
  t.regex(tronFunded.body.message, /the local Tron is not running/);
  const pay = async (rpcUrl: string, to: Address, amount: bigint) => {
    const clients = createEvmWriteClients({ rpcUrl, chainId: 31337, privateKey: payerKey, pollingIntervalMs: 25 });
    const hash = await clients.walletClient.writeContract({
      address: info.contracts.usdc,
      abi: erc20Abi,
      functionName: 'transfer',
      args: [to, amount],
      gas: 120_000n,
    });
    await clients.publicClient.waitForTransactionReceipt({ hash });
  };
  const paymentAddress = (session: Session) =>
    getAddress(session.addresses.find((a) => a.asset.currency === 'usdc')!.paymentAddress);
  const completed = (id: string) =>
    eventually(async () => {
      const s = (await api.get<Session>(`/api/v1/checkout/sessions/${id}`)).body;
      return s.status === 'complete' ? s : undefined;
    }, `session ${id} complete`);

  const before = (await api.post<Session>('/api/v1/checkout/sessions', usdcSession)).body;
  await pay(info.rpcUrl, paymentAddress(before), parseUnits('2.5', 6));
  t.is((await completed(before.id)).amountReceived, '250000000');

  // Weir is killed with -9 (its anvil is left running); the next start stops that anvil, which writes its state.
  await first.crash();
  const second = await spawnWeir({ dataDir, env });
  t.teardown(() => second.kill());
  t.regex(second.output(), /stopping the anvil \(pid \d+\) a previous weir serve left running/);
  const again = parseDevnetInfo(JSON.parse(await readFile(join(dataDir, 'local-chain', 'devnet.json'), 'utf8')));
  t.deepEqual(again.contracts, info.contracts, 'the contracts are kept, not deployed again');
  t.notRegex(second.output(), /deployed the forwarder factory/);
  api = apiClient(second.url, created.testSecretKey);
  t.is((await api.get<Session>(`/api/v1/checkout/sessions/${before.id}`)).body.status, 'complete');
  const payerBalance = await createEvmWriteClients({
    rpcUrl: again.rpcUrl,
    chainId: 31337,
    privateKey: payerKey,
  }).publicClient.readContract({
    address: info.contracts.usdc,
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [payer],
  });
  t.is(payerBalance, parseUnits('10', 6) - parseUnits('2.5', 6), 'balances survive the restart');

  const after = (await api.post<Session>('/api/v1/checkout/sessions', usdcSession)).body;
  await pay(again.rpcUrl, paymentAddress(after), parseUnits('2.5', 6));
  t.is((await completed(after.id)).amountReceived, '250000000');

  // A clean stop (SIGTERM) stops the chain too.
  await second.kill('SIGTERM');
  t.is(second.child.exitCode, 0, second.output());
  await t.throwsAsync(fetch(again.rpcUrl, { method: 'POST' }));
});

test('local chain rolled back behind Weir (anvil lost blocks it had not written): Weir mines up to its checkpoint, the follower reports the lost blocks as a reorg, and a payment after the restart is detected', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-local-chain-rollback-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  // It reads the EVM chain alone: the local Tron and Solana are not started.
  const env = { WEIR_LOCAL_CHAIN: 'evm' };
  const stateFile = join(dataDir, 'local-chain', 'state.json');
  const paying = await spawnWeir({ dataDir, env });
  t.teardown(() => paying.kill());
  const created = (
    await apiClient(paying.url, ADMIN_TOKEN).post<{ testSecretKey: string }>('/admin/organizations', { name: 'Shop' })
  ).body;
  const info = parseDevnetInfo(JSON.parse(await readFile(join(dataDir, 'local-chain', 'devnet.json'), 'utf8')));
  let api = apiClient(paying.url, created.testSecretKey);
  await api.post('/api/v1/organization/withdrawal-addresses', { chainId: 31337, address: merchantWallet(info) });
  const payer = devnetPayer(info);
  // anvil writes its state every second: the one from before the payments (the deployment and funding,
  // nothing after) is what an anvil that died before writing them would come back with.
  const deployedUpTo = Number(await payer.clients.publicClient.getBlockNumber());
  const older = await eventually(async () => {
    const text = await readFile(stateFile, 'utf8').catch(() => '');
    try {
      return (JSON.parse(text) as { best_block_number?: number }).best_block_number === deployedUpTo ? text : undefined;
    } catch {
      return undefined; // not written yet, or read while anvil was writing it
    }
  }, 'anvil wrote its state after the deployment');

  for (let i = 0; i < 3; i++) {
    const session = (await api.post<Session>('/api/v1/checkout/sessions', usdcSession)).body;
    await payer.payToken(
      info.contracts.usdc,
      getAddress(session.addresses.find((a) => a.asset.currency === 'usdc')!.paymentAddress),
      parseUnits('2.5', 6),
    );
  }
  // Deployment and funding took blocks 1..10; the three payments are blocks 11..13.
  await eventually(async () => {
    const checkpoint = JSON.parse(await readFile(join(dataDir, 'ingest', 'devnet.evm-follower.json'), 'utf8')) as {
      nextBlock: number;
    };
    return checkpoint.nextBlock > 13 ? checkpoint : undefined;
  }, 'the follower read the paying blocks');
  await paying.kill('SIGTERM');
  // As if anvil had died before writing these blocks: its state is the one from before the payments.
  await writeFile(stateFile, older);

  const restarted = await spawnWeir({ dataDir, env });
  t.teardown(() => restarted.kill());
  t.regex(
    restarted.output(),
    /"component":"local chain",.*"event":"local_chain.blocks_mined".*"msg":"the chain is at block \d+ but Weir had read up to block \d+ .*mined \d+ empty blocks/,
  );
  api = apiClient(restarted.url, created.testSecretKey);
  const after = (await api.post<Session>('/api/v1/checkout/sessions', usdcSession)).body;
  const again = devnetPayer(
    parseDevnetInfo(JSON.parse(await readFile(join(dataDir, 'local-chain', 'devnet.json'), 'utf8'))),
  );
  await again.payToken(
    info.contracts.usdc,
    getAddress(after.addresses.find((a) => a.asset.currency === 'usdc')!.paymentAddress),
    parseUnits('2.5', 6),
  );
  const done = await eventually(async () => {
    const s = (await api.get<Session>(`/api/v1/checkout/sessions/${after.id}`)).body;
    return s.status === 'complete' ? s : undefined;
  }, 'the payment after the rollback is detected').catch((error: unknown) => {
    t.log(restarted.output());
    throw error;
  });
  t.is(done.amountReceived, '250000000');
  t.regex(restarted.output(), /reorg/i, 'the lost blocks are reported, not silently dropped');
  // A clean stop stops the chain too (a Weir killed -9 would leave anvil for its next start to stop).
  const rpcUrl = parseDevnetInfo(
    JSON.parse(await readFile(join(dataDir, 'local-chain', 'devnet.json'), 'utf8')),
  ).rpcUrl;
  await restarted.kill('SIGTERM');
  await t.throwsAsync(fetch(rpcUrl, { method: 'POST' }));
});

/** `weir serve` with WEIR_LOCAL_CHAIN=`family` alone on a new data dir: its anvils, and what a test key of a new organization is offered. */
async function serveAlone(t: ExecutionContext, family: 'solana' | 'tron') {
  const dataDir = await mkdtemp(join(tmpdir(), `weir-local-${family}-alone-`));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const weir = await spawnWeir({ dataDir, env: { WEIR_LOCAL_CHAIN: family } });
  t.teardown(() => weir.kill());
  const anvils = descendantsOf(weir.child.pid!).filter((p) => /anvil/.test(p.commandLine));
  const created = (
    await apiClient(weir.url, ADMIN_TOKEN).post<{ testSecretKey: string }>('/admin/organizations', {
      name: `${family} shop`,
    })
  ).body;
  const api = apiClient(weir.url, created.testSecretKey);
  const chains = (await api.get<{ data: Chain[] }>('/api/v1/chains')).body.data;
  return { dataDir, weir, anvils, api, chains };
}

test('weir serve with WEIR_LOCAL_CHAIN=solana runs the local Solana alone: it is offered to test keys, no local EVM chain or Tron is, no anvil starts, and the faucet (which gives on those two only) says how to start one', async (t) => {
  const { dataDir, weir, anvils, api, chains } = await serveAlone(t, 'solana');
  t.deepEqual(anvils, [], describe(anvils));
  for (const dir of ['local-chain', 'local-tron'])
    await t.throwsAsync(readFile(join(dataDir, dir, 'devnet.json'), 'utf8'), { code: 'ENOENT' });
  t.deepEqual(
    chains.map((chain) => chain.id),
    [SOLANA_LOCALNET_CHAIN_ID],
    JSON.stringify(chains),
  );
  // No faucet runs at all: whatever the address (an EVM one, a Solana one), a 400 that names what this
  // server lacks (the local Solana it offers is not a faucet chain) and the setting to change.
  const message = `no faucet on this server: ${noFaucetReason({ beside: [] })}; ${FAUCET_START_HINT}`;
  t.regex(message, /offers only the local Solana, and the faucet gives on the local chain and the local Tron/);
  for (const address of [privateKeyToAccount(generatePrivateKey()).address, SOLANA_PAYER]) {
    const funded = await api.post<{ code: string; message: string }>('/api/v1/faucet', { address });
    t.like(funded, { status: 400, body: { code: 'faucet_unavailable', message } }, address);
  }
  t.notRegex(weir.output(), /could not start/);
});

test("weir serve with WEIR_LOCAL_CHAIN=tron runs the local Tron alone: it is offered to test keys and the faucet gives on it, no local EVM chain or Solana is, and only the local Tron's anvil starts", async (t) => {
  const { dataDir, weir, anvils, api, chains } = await serveAlone(t, 'tron');
  t.is(anvils.length, 1, describe(anvils));
  t.regex(anvils[0]!.commandLine, /local-tron/, describe(anvils));
  await t.throwsAsync(readFile(join(dataDir, 'local-chain', 'devnet.json'), 'utf8'), { code: 'ENOENT' });
  t.is(
    parseDevnetInfo(JSON.parse(await readFile(join(dataDir, 'local-tron', 'devnet.json'), 'utf8'))).chainId,
    TRON_LOCAL_CHAIN_ID,
  );
  t.deepEqual(
    chains.map((chain) => chain.id),
    [TRON_LOCAL_CHAIN_ID],
    JSON.stringify(chains),
  );
  // The faucet gives on the local Tron; an EVM address is answered plainly: the local EVM chain is not running.
  const payer = evmToTron(privateKeyToAccount(generatePrivateKey()).address);
  t.like(await api.post('/api/v1/faucet', { address: payer }), {
    status: 200,
    body: { address: payer, asset: 'usdt', chainId: TRON_LOCAL_CHAIN_ID },
  });
  const evmFunded = await api.post<{ code: string; message: string }>('/api/v1/faucet', {
    address: privateKeyToAccount(generatePrivateKey()).address,
  });
  t.like(evmFunded, {
    status: 400,
    body: {
      code: 'faucet_unavailable',
      message: 'address: no faucet for it on this server: the local chain is not running',
    },
  });
  t.notRegex(weir.output(), /could not start/);
});
