import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { erc20Abi, getAddress, parseEther, type Address, type Hash, type Hex } from 'viem';
import { testTokenAbi } from '../../src/chain-ingest/evm/contracts/abis.ts';
import { createEvmWriteClients, type EvmWriteClients } from '../../src/chain-ingest/evm/contracts/clients.ts';
import { devnetAccount, writeDevnetInfo, type DevnetInfo } from '../../src/chain-ingest/evm/devnet/devnet-info.ts';
import { createJsonRpc } from '../../src/chain-ingest/evm/devnet/json-rpc.ts';
import { startDevnet } from '../../src/chain-ingest/evm/devnet/start-devnet.ts';

export type TestDevnet = {
  info: DevnetInfo;
  file: string;
  rpc(method: string, params?: unknown[]): Promise<unknown>;
  mine(blocks: number): Promise<void>;
};

/** A devnet on a free port with its info file, stopped when the test ends. */
export async function startTestDevnet(
  t: ExecutionContext,
  options: { node?: 'hardhat' | 'anvil' } = {},
): Promise<TestDevnet> {
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

/** A session as far as paying its USDC deposit address goes. */
type UsdcSession = { addresses: { paymentAddress: string; asset: { currency: string } }[] };

/**
 * The devnet mining a block every `intervalMs` with whatever is pending, as a real network does, and
 * USDC payers that pay a batch of sessions in one block: the devnet's payer accounts and
 * `morePayerKeys` (minted USDC by the deployer first, while the devnet still mines each transaction).
 * `payBlock` sends each session's transfer from the next payer in turn, on nonces counted here so none
 * waits for another, then waits for every receipt: it throws naming the hash that is not mined within
 * `timeoutMs` or reverted. `merchantReceived` is what the merchant's wallet has gained since the start.
 */
export async function payingInBlocks(
  devnet: Pick<TestDevnet, 'info' | 'rpc'>,
  options: { intervalMs: number; morePayerKeys?: Hex[] },
) {
  const { info } = devnet;
  const usdc = info.contracts.usdc;
  const clientsOf = (privateKey: Hex) =>
    createEvmWriteClients({ rpcUrl: info.rpcUrl, chainId: info.chainId, privateKey });
  const deployer = clientsOf(devnetAccount(info, 'deployer').privateKey);
  const more = (options.morePayerKeys ?? []).map(clientsOf);
  for (const payer of more) {
    const hash = await deployer.walletClient.writeContract({
      address: usdc,
      abi: testTokenAbi,
      functionName: 'mint',
      args: [payer.walletClient.account.address, 1_000_000_000_000n],
    });
    await deployer.publicClient.waitForTransactionReceipt({ hash });
  }
  const payers = [...info.accounts.filter((a) => a.role === 'payer').map((a) => clientsOf(a.privateKey)), ...more];
  await devnet.rpc('evm_setAutomine', [false]);
  await devnet.rpc('evm_setIntervalMining', [options.intervalMs]);
  const merchant = merchantWallet(info);
  const balanceOf = (owner: Address) =>
    deployer.publicClient.readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });
  const merchantBefore = await balanceOf(merchant);
  let nonces: number[] | undefined;

  const payBlock = async (payments: { session: UsdcSession; amount: bigint }[], timeoutMs: number) => {
    nonces ??= await Promise.all(
      payers.map((p) => p.publicClient.getTransactionCount({ address: p.walletClient.account.address })),
    );
    const counted = nonces;
    const hashes = await Promise.all(
      payments.map(({ session, amount }, i) => {
        const p = i % payers.length;
        const to = getAddress(session.addresses.find((a) => a.asset.currency === 'usdc')!.paymentAddress);
        return payers[p]!.walletClient.writeContract({
          address: usdc,
          abi: erc20Abi,
          functionName: 'transfer',
          args: [to, amount],
          gas: 120_000n,
          nonce: counted[p]!++,
        });
      }),
    );
    for (const hash of hashes) {
      const receipt = await deployer.publicClient
        .waitForTransactionReceipt({ hash, timeout: timeoutMs })
        .catch((error: unknown) => {
          throw new Error(`${hash} not mined (${String(error)})`);
        });
      if (receipt.status !== 'success') throw new Error(`${hash} reverted`);
    }
  };
  return { merchant, payBlock, merchantReceived: async () => (await balanceOf(merchant)) - merchantBefore };
}

export const merchantWallet = (info: DevnetInfo): Address => devnetAccount(info, 'merchant').address;
export const oneEther = parseEther('1');
