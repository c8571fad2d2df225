import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { createPublicClient, erc20Abi, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { payTrc20WithoutFee } from '../../../../test/support/tron-devnet.ts';
import type { LogFields } from '../../../shared/logger.ts';
import { FaucetError } from '../../evm/devnet/errors.ts';
import { evmToTron, tronToEvm } from '../address.ts';
import { TRON_LOCAL_CHAIN_ID } from '../networks.ts';
import { fundFromTronFaucet } from './tron-faucet.ts';
import { startEmbeddedLocalTron, tronDevnetAddresses } from './tron-devnet.ts';

test("npm start's local Tron: deployed once and kept in the data dir, read through the proxy, its faucet funds a T… address with TRX and test USDT, which then pays with no fee", async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-local-tron-unit-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const lines: string[] = [];
  const fields: LogFields[] = [];
  const log = (line: string, given: LogFields = {}) => {
    lines.push(line);
    fields.push(given);
  };

  const first = await startEmbeddedLocalTron({ dataDir, log });
  t.teardown(() => first.stop());
  t.is(first.devnet.chainId, TRON_LOCAL_CHAIN_ID);
  // Its anvil's lines and its own carry an event and the family, as weir serve's structured lines do.
  const events = fields.map((given) => [given['event'], given['family']]);
  t.deepEqual(events.slice(-1), [['local_chain.started', 'tron']]);
  t.true(events.some(([event, family]) => event === 'anvil.started' && family === 'tron'));
  t.true(events.some(([event, family]) => event === 'local_chain.deployed' && family === 'tron'));
  t.like(fields.at(-1), { rpcUrl: first.proxyUrl });
  // What it offers, as the README lists it: not the EVM devnet's DAI.
  t.true(
    lines.some((line) =>
      line.startsWith(
        '[local tron] deployed the Tron forwarder factory and test USDT and USDC (TRX is its native coin)',
      ),
    ),
    lines.join('\n'),
  );
  t.false(lines.some((line) => line.includes('DAI')));
  const { tokens, factory } = tronDevnetAddresses(first.devnet);
  t.like(first.info, { rpcUrl: first.proxyUrl, sendUrl: first.devnet.rpcUrl, tokens, factory, confirmations: 1 });
  t.regex(tokens.usdt, /^T/);

  const payerKey = generatePrivateKey();
  const payer = evmToTron(privateKeyToAccount(payerKey).address);
  await fundFromTronFaucet(first.devnet, { to: payer, asset: 'trx', amount: 5_000_000n });
  await fundFromTronFaucet(first.devnet, { to: payer, asset: 'usdt', amount: 7_000_000n });
  const reader = createPublicClient({ transport: http(first.proxyUrl, { retryCount: 0 }) });
  t.is(await reader.getChainId(), TRON_LOCAL_CHAIN_ID);
  t.is(await reader.getBalance({ address: tronToEvm(payer) }), 5_000_000n, '5 TRX in sun');
  const balance = () =>
    reader.readContract({
      address: tronToEvm(tokens.usdt),
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [tronToEvm(payer)],
    });
  t.is(await balance(), 7_000_000n);
  await t.throwsAsync(fundFromTronFaucet(first.devnet, { to: tronToEvm(payer), asset: 'trx', amount: 1n }), {
    instanceOf: FaucetError,
    message: /"to" /,
  });

  // A payer holding a few TRX pays: the chain charges no fee.
  const receipt = await payTrc20WithoutFee(first.devnet, payerKey, {
    token: tokens.usdt,
    to: tronDevnetAddresses(first.devnet).merchant,
    amount: 2_000_000n,
  });
  t.is(receipt.status, 'success');
  t.is(await balance(), 5_000_000n);
  t.is(await reader.getBalance({ address: tronToEvm(payer) }), 5_000_000n);
  await first.stop();

  lines.length = 0;
  const second = await startEmbeddedLocalTron({ dataDir, log });
  t.teardown(() => second.stop());
  t.false(
    lines.some((line) => line.includes('deployed')),
    lines.join('\n'),
  );
  t.deepEqual(second.info.tokens, first.info.tokens);
  t.is(
    await createPublicClient({ transport: http(second.proxyUrl) }).getBalance({ address: tronToEvm(payer) }),
    5_000_000n,
  );
});
