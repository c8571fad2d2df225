import test from 'ava';
import { createPublicClient, createTestClient, createWalletClient, custom, type Hash, parseGwei } from 'viem';
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

test('on anvil, a pending flush replaced by another transaction of the sweeper with its nonce is no sweep: the nonce is used, and the deposit keeps its funds', async (t) => {
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
  const pending = await eventually(async () => {
    if (!ours) return undefined;
    return deployer.publicClient.getTransaction({ hash: ours }).catch(() => undefined);
  }, 'the flush pending on anvil');
  await readByTheWait;
  // The operator's own transaction with that nonce, paying more: anvil keeps it in the flush's place.
  await sweeper.walletClient.sendTransaction({
    to: sweeperAccount.address,
    value: 0n,
    nonce: pending.nonce,
    maxFeePerGas: (pending.maxFeePerGas ?? 0n) * 2n + parseGwei('1'),
    maxPriorityFeePerGas: (pending.maxPriorityFeePerGas ?? 0n) * 2n + parseGwei('1'),
  });
  await testClient.mine({ blocks: 1 });

  const error = await t.throwsAsync(flushed, { instanceOf: ForwarderFlushError });
  t.is(error?.refusal, 'nonce-used');
  t.is(error?.transactionHash, ours);
  t.regex(error?.message ?? '', /replaced/);
  const balance = await deployer.publicClient.readContract({
    address: usdc,
    abi: testTokenAbi,
    functionName: 'balanceOf',
    args: [deposit],
  });
  t.is(balance, 3_000_000n, 'nothing was swept');
});
