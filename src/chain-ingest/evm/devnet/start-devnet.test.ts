import test from 'ava';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, http, parseEther, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { findFreePort } from '../../../../test/support/free-port.ts';
import { forwarderFactoryAbi, testTokenAbi } from '../contracts/abis.ts';
import { deriveDepositAddress, sessionSaltOf } from '../contracts/deposit-address.ts';
import { devnetAccount, readDevnetInfo } from './devnet-info.ts';
import { FaucetError, HardhatNodeStartError } from './errors.ts';
import { fundFromFaucet } from './faucet.ts';
import { startDevnet, type Devnet, type StartDevnetOptions } from './start-devnet.ts';

/** startDevnet on a free port, once more on another if the port was taken in between. */
async function startOnFreePort(options: Omit<StartDevnetOptions, 'port'>): Promise<Devnet> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startDevnet({ ...options, port: await findFreePort() });
    } catch (error) {
      if (attempt >= 3 || !(error instanceof HardhatNodeStartError) || !error.retryable) throw error;
    }
  }
}

test('startDevnet deploys the contracts, writes a valid info file, funds through the faucet and stop cleans up', async (t) => {
  const directory = await mkdtemp(join(tmpdir(), 'weir-devnet-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  const infoFile = join(directory, 'devnet.json');
  const devnet = await startOnFreePort({ infoFile });
  t.teardown(() => devnet.stop());
  const { info } = devnet;

  // The info file is the returned document and passes the validator.
  t.is(devnet.infoFile, infoFile);
  t.deepEqual(await readDevnetInfo(infoFile), info);
  t.deepEqual(JSON.parse(await readFile(infoFile, 'utf8')), info);
  t.is(info.chainId, 31337);
  t.regex(info.rpcUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
  t.is(info.wsUrl, info.rpcUrl.replace('http:', 'ws:'));
  t.deepEqual(
    info.accounts.map((account) => account.role),
    ['deployer', 'sweeper', 'payer', 'payer', 'merchant'],
  );
  // A fresh node always gives the deployer's contracts the same addresses.
  t.deepEqual(info.contracts, {
    forwarderFactory: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
    usdc: '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512',
    usdt: '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0',
    dai: '0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9',
  });

  const client = createPublicClient({ transport: http(info.rpcUrl) });
  const tokenFacts = async (address: Address) =>
    Promise.all([
      client.readContract({ address, abi: testTokenAbi, functionName: 'symbol' }),
      client.readContract({ address, abi: testTokenAbi, functionName: 'decimals' }),
      client.readContract({ address, abi: testTokenAbi, functionName: 'owner' }),
    ]);
  const deployer = devnetAccount(info, 'deployer').address;
  t.deepEqual(await tokenFacts(info.contracts.usdc), ['USDC', 6, deployer]);
  t.deepEqual(await tokenFacts(info.contracts.usdt), ['USDT', 6, deployer]);
  t.deepEqual(await tokenFacts(info.contracts.dai), ['DAI', 18, deployer]);
  const payer = devnetAccount(info, 'payer').address;
  t.is(
    await client.readContract({
      address: info.contracts.dai,
      abi: testTokenAbi,
      functionName: 'balanceOf',
      args: [payer],
    }),
    1_000_000n * 10n ** 18n,
  );

  // The factory answers for the offline derivation.
  const merchant = devnetAccount(info, 'merchant').address;
  const sessionId = '6f1c1a52-95d4-4a57-8d0c-2b8f6f3f2a10';
  t.is(
    await client.readContract({
      address: info.contracts.forwarderFactory,
      abi: forwarderFactoryAbi,
      functionName: 'predictAddress',
      args: [merchant, sessionSaltOf(sessionId)],
    }),
    deriveDepositAddress({ factoryAddress: info.contracts.forwarderFactory, merchantAddress: merchant, sessionId }),
  );

  // The faucet: a fresh account gets exactly what was asked for, concurrently and in any asset.
  const recipient = privateKeyToAccount(generatePrivateKey()).address;
  const hashes = await Promise.all([
    fundFromFaucet(info, { to: recipient, asset: 'eth', amount: parseEther('2.5') }),
    fundFromFaucet(info, { to: recipient, asset: 'usdc', amount: 1_500_000n }),
    fundFromFaucet(info, { to: recipient, asset: 'usdt', amount: 2_000_000n }),
    fundFromFaucet(info, { to: recipient, asset: 'dai', amount: 3n * 10n ** 18n }),
  ]);
  t.is(new Set(hashes).size, 4);
  for (const hash of hashes) t.is((await client.getTransactionReceipt({ hash })).status, 'success');
  t.is(await client.getBalance({ address: recipient }), parseEther('2.5'));
  const tokenBalance = (token: Address) =>
    client.readContract({ address: token, abi: testTokenAbi, functionName: 'balanceOf', args: [recipient] });
  t.is(await tokenBalance(info.contracts.usdc), 1_500_000n);
  t.is(await tokenBalance(info.contracts.usdt), 2_000_000n);
  t.is(await tokenBalance(info.contracts.dai), 3n * 10n ** 18n);
  await t.throwsAsync(fundFromFaucet(info, { to: recipient, asset: 'usdc', amount: 0n }), {
    instanceOf: FaucetError,
    message: /positive/,
  });

  // stop: the node is gone, the info file too, and the faucet says what is wrong.
  await devnet.stop();
  t.false(existsSync(infoFile));
  await t.throwsAsync(fundFromFaucet(info, { to: recipient, asset: 'eth', amount: 1n }), {
    instanceOf: FaucetError,
    message: /still running/,
  });
});

test('startDevnet on a taken port fails with a retryable HardhatNodeStartError', async (t) => {
  const first = await startOnFreePort({});
  t.teardown(() => first.stop());
  const port = Number(new URL(first.info.rpcUrl).port);
  const error = await t.throwsAsync(startDevnet({ port }), { instanceOf: HardhatNodeStartError });
  t.true(error?.retryable);
});
