import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { erc20Abi, parseEther, type Address, type Hash } from 'viem';
import { createEvmWriteClients, type EvmWriteClients } from '../../src/chain-ingest/evm/contracts/clients.ts';
import { devnetAccount, writeDevnetInfo, type DevnetInfo } from '../../src/chain-ingest/evm/devnet/devnet-info.ts';
import { createJsonRpc } from '../../src/chain-ingest/evm/devnet/json-rpc.ts';
import { startDevnet } from '../../src/chain-ingest/evm/devnet/start-devnet.ts';

/** A devnet on a free port with its info file, stopped when the test ends. */
export async function startTestDevnet(
  t: ExecutionContext,
  options: { node?: 'hardhat' | 'anvil' } = {},
): Promise<{
  info: DevnetInfo;
  file: string;
  rpc(method: string, params?: unknown[]): Promise<unknown>;
  mine(blocks: number): Promise<void>;
}> {
  const devnet = await startDevnet({ port: 0, ...options });
  const dir = await mkdtemp(join(tmpdir(), 'weir-devnet-file-'));
  const file = join(dir, 'devnet.json');
  await writeDevnetInfo(file, devnet.info);
  t.teardown(async () => {
    await devnet.stop();
    await rm(dir, { recursive: true, force: true });
  });
  const rpc = createJsonRpc(devnet.info.rpcUrl);
  /** Mine `blocks` blocks one at a time (hardhat_mine's reserved blocks can read back with a zero parent hash). */
  const mine = async (blocks: number) => {
    for (let i = 0; i < blocks; i++) await rpc('evm_mine');
  };
  return { info: devnet.info, file, rpc, mine };
}

/** A payer wallet on the devnet that sends tokens and native coin, waiting for each to be mined. */
export function devnetPayer(info: DevnetInfo, index = 0) {
  const account = info.accounts.filter((a) => a.role === 'payer')[index]!;
  const clients: EvmWriteClients = createEvmWriteClients({
    rpcUrl: info.rpcUrl,
    chainId: info.chainId,
    privateKey: account.privateKey,
  });
  const wait = async (hash: Hash) => {
    const receipt = await clients.publicClient.waitForTransactionReceipt({ hash });
    return { hash, blockNumber: receipt.blockNumber, blockHash: receipt.blockHash };
  };
  return {
    address: account.address,
    clients,
    payToken: async (token: Address, to: Address, amount: bigint) =>
      // A fixed gas limit: an estimate taken just before a sweep empties the address would fall short.
      wait(
        await clients.walletClient.writeContract({
          address: token,
          abi: erc20Abi,
          functionName: 'transfer',
          args: [to, amount],
          gas: 120_000n,
        }),
      ),
    payNative: async (to: Address, wei: bigint) =>
      wait(await clients.walletClient.sendTransaction({ to, value: wei, gas: 60_000n })),
    tokenBalance: (token: Address, owner: Address) =>
      clients.publicClient.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [owner] }),
    nativeBalance: (owner: Address) => clients.publicClient.getBalance({ address: owner }),
  };
}

export const merchantWallet = (info: DevnetInfo): Address => devnetAccount(info, 'merchant').address;
export const oneEther = parseEther('1');
