import test, { type ExecutionContext } from 'ava';
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  custom,
  parseGwei,
  type Address,
  type Hash,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { eventually } from '../../../../test/support/api-client.ts';
import { hardhatAccounts } from '../../../../test/support/hardhat-node.ts';
import { startAnvilNode } from '../devnet/anvil-node.ts';
import { localNodeTransport } from '../devnet/local-node-transport.ts';
import { testTokenAbi } from './abis.ts';
import { createEvmWriteClients, type EvmWriteClients } from './clients.ts';
import { deployForwarderFactory, deployTestToken } from './deploy-contracts.ts';
import { deriveDepositAddress } from './deposit-address.ts';
import { ForwarderFlushError } from './errors.ts';
import { flushForwarders } from './flush-forwarders.ts';

/**
 * On anvil (automine off): a flush of a deposit holding 3 USDC, pending, its receipt waited for by
 * `flushForwarders`, and `replace`, which sends another transaction of the sweeper with the flush's
 * nonce paying more (anvil keeps it in the flush's place) and mines it.
 */
async function pendingFlush(t: ExecutionContext) {
  const anvil = await startAnvilNode();
  t.teardown(() => anvil.stop());
  const [deployerAccount, sweeperAccount, merchant] = hardhatAccounts;
  const deployer = createEvmWriteClients({
    rpcUrl: anvil.rpcUrl,
    chainId: anvil.chainId,
    privateKey: deployerAccount.privateKey,
  });
  // viem spots a replacement by the nonce of the transaction it read: the test replaces it only once
  // the flush's wait has read it from the node (under load, that read can come late).
  let read!: () => void;
  const readByTheWait = new Promise<void>((resolve) => {
    read = resolve;
  });
  const chain = deployer.publicClient.chain;
  const node = localNodeTransport(anvil.rpcUrl)({ chain, retryCount: 0 });
  const transport = custom({
    async request(request: { method: string; params?: unknown }) {
      const answer = await node.request(request as Parameters<typeof node.request>[0]);
      if (request.method === 'eth_getTransactionByHash' && answer) read();
      return answer;
    },
  });
  const sweeper: EvmWriteClients = {
    publicClient: createPublicClient({ chain, transport, pollingInterval: 10 }),
    walletClient: createWalletClient({
      chain,
      transport,
      pollingInterval: 10,
      account: privateKeyToAccount(sweeperAccount.privateKey),
    }),
  };
  const factoryAddress = (await deployForwarderFactory(deployer)).address;
  const usdc = (await deployTestToken(deployer, { name: 'Test USD Coin', symbol: 'USDC', decimals: 6 })).address;
  const request = {
    merchantAddress: merchant.address,
    sessionId: '6f1c1b8e-3a52-4f0e-9c41-2b7d3c5e9a10',
    tokens: [usdc],
    native: false,
  };
  const deposit = deriveDepositAddress({ factoryAddress, ...request });
  await deployer.publicClient.waitForTransactionReceipt({
    hash: await deployer.walletClient.writeContract({
      address: usdc,
      abi: testTokenAbi,
      functionName: 'mint',
      args: [deposit, 3_000_000n],
    }),
  });
  const testClient = createTestClient({
    chain: deployer.publicClient.chain,
    mode: 'anvil',
    transport: localNodeTransport(anvil.rpcUrl),
  });
  await testClient.setAutomine(false);

  let ours: Hash | undefined;
  const flushed = flushForwarders(sweeper, {
    factoryAddress,
    requests: [request],
    beforeSend: async (signed) => {
      ours = signed.transactionHash;
    },
  });
  // Settled with whatever comes, so that an early failure is not unhandled while the test replaces it.
  flushed.catch(() => undefined);
  const pending = await eventually(async () => {
    if (!ours) return undefined;
    return deployer.publicClient.getTransaction({ hash: ours }).catch(() => undefined);
  }, 'the flush pending on anvil');
  await readByTheWait;
  const balanceOf = (holder: Address) =>
    deployer.publicClient.readContract({ address: usdc, abi: testTokenAbi, functionName: 'balanceOf', args: [holder] });
  return {
    flushed,
    ours: pending.hash,
    /** The flush as the node shows it. */
    flush: pending,
    deposit,
    merchant: merchant.address,
    balanceOf,
    /** The operator's own transaction with the flush's nonce, paying more, mined in its place: its hash. */
    async replace(call: { to: Address; data?: Hex; gas?: bigint }): Promise<Hash> {
      const hash = await sweeper.walletClient.sendTransaction({
        ...call,
        value: 0n,
        nonce: pending.nonce,
        maxFeePerGas: (pending.maxFeePerGas ?? 0n) * 2n + parseGwei('1'),
        maxPriorityFeePerGas: (pending.maxPriorityFeePerGas ?? 0n) * 2n + parseGwei('1'),
      });
      await testClient.mine({ blocks: 1 });
      return hash;
    },
    receiptOf: (hash: Hash) => deployer.publicClient.getTransactionReceipt({ hash }),
    sweeperAddress: sweeperAccount.address,
  };
}

test('on anvil, a pending flush replaced by another transaction of the sweeper with its nonce is no sweep: the nonce is used, and the deposit keeps its funds', async (t) => {
  const { flushed, ours, deposit, balanceOf, replace, sweeperAddress } = await pendingFlush(t);
  await replace({ to: sweeperAddress });

  const error = await t.throwsAsync(flushed, { instanceOf: ForwarderFlushError });
  t.is(error?.refusal, 'nonce-used');
  t.is(error?.transactionHash, ours);
  t.regex(error?.message ?? '', /replaced/);
  t.is(await balanceOf(deposit), 3_000_000n, 'nothing was swept');
});

test('on anvil, a pending flush sped up (the same call repriced, mined with its nonce) is the sweep: its hash, its gas, and the flush it replaces', async (t) => {
  const { flushed, ours, flush, deposit, merchant, balanceOf, replace, receiptOf } = await pendingFlush(t);
  // As a wallet speeds it up: the same call and gas limit (an estimate now would run on the pending flush).
  const copy = await replace({ to: flush.to!, data: flush.input, gas: flush.gas });
  t.not(copy, ours);

  const swept = await flushed;
  const receipt = await receiptOf(copy);
  t.is(swept.transactionHash, copy);
  t.is(swept.replaces, ours);
  t.is(swept.blockNumber, receipt.blockNumber);
  t.is(swept.gasUsed, receipt.gasUsed);
  t.is(swept.gasCost, receipt.gasUsed * receipt.effectiveGasPrice);
  t.deepEqual(swept.transfers, [
    { forwarder: deposit, merchant, token: swept.transfers[0]?.token, amount: 3_000_000n },
  ]);
  t.is(await balanceOf(deposit), 0n);
  t.is(await balanceOf(merchant), 3_000_000n);
});
