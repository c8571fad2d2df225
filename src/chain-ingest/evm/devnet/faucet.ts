import { BaseError, ExecutionRevertedError, isAddress, type Address, type Hash } from 'viem';
import { testTokenAbi } from '../contracts/abis.ts';
import { createEvmWriteClients } from '../contracts/clients.ts';
import { devnetAccount, type DevnetInfo } from './devnet-info.ts';
import { FaucetError, FaucetRefusedError } from './errors.ts';

export const faucetAssets = ['eth', 'usdc', 'usdt', 'dai'] as const;
export type FaucetAsset = (typeof faucetAssets)[number];

export type FundFromFaucetParameters = {
  /** The account to fund. */
  to: Address;
  asset: FaucetAsset;
  /** In the asset's smallest unit: wei for `eth`, 10^-6 for `usdc`/`usdt`, 10^-18 for `dai`. */
  amount: bigint;
  /** How messages name the asset: the local Tron's TRX is its anvil's `eth`. */
  shownAs?: string;
};

/** Faucet transactions of one deployer, one after the other, so concurrent calls never reuse a nonce. */
const queues = new Map<string, Promise<unknown>>();

/**
 * Funds `to` on a running devnet: sends native coin from the deployer for `eth`, or mints the
 * test token (the deployer owns them) for `usdc`, `usdt` and `dai`. Resolves with the transaction
 * hash once it is mined. Throws {@link FaucetError} saying what went wrong.
 */
export async function fundFromFaucet(info: DevnetInfo, parameters: FundFromFaucetParameters): Promise<Hash> {
  const { to, asset, amount } = parameters;
  if (!isAddress(to, { strict: false }))
    throw new FaucetError(`fundFromFaucet: "to" ${JSON.stringify(to)} is not an address (0x + 40 hex digits)`);
  if (!faucetAssets.includes(asset))
    throw new FaucetError(`fundFromFaucet: asset ${JSON.stringify(asset)} is not one of ${faucetAssets.join(', ')}`);
  if (typeof amount !== 'bigint' || amount <= 0n)
    throw new FaucetError(
      `fundFromFaucet: amount must be a positive bigint in the asset's smallest unit, got ${String(amount)}`,
    );

  const deployer = devnetAccount(info, 'deployer');
  const queueKey = `${info.rpcUrl} ${deployer.address}`;
  const previous = queues.get(queueKey) ?? Promise.resolve();
  const run = previous.catch(() => undefined).then(() => send(info, deployer.privateKey, parameters));
  queues.set(queueKey, run);
  try {
    return await run;
  } finally {
    if (queues.get(queueKey) === run) queues.delete(queueKey);
  }
}

async function send(
  info: DevnetInfo,
  deployerKey: `0x${string}`,
  { to, asset, amount, shownAs = asset }: FundFromFaucetParameters,
): Promise<Hash> {
  const { publicClient, walletClient } = createEvmWriteClients({
    rpcUrl: info.rpcUrl,
    chainId: info.chainId,
    privateKey: deployerKey,
  });
  let hash: Hash;
  try {
    hash =
      asset === 'eth'
        ? await walletClient.sendTransaction({ to, value: amount })
        : // TestToken and TetherLikeToken share mint(address,uint256).
          await walletClient.writeContract({
            address: info.contracts[asset],
            abi: testTokenAbi,
            functionName: 'mint',
            args: [to, amount],
          });
  } catch (error) {
    // A coin transfer reverts only when its receiver refuses it: a contract with no payable receive.
    if (asset === 'eth' && error instanceof BaseError && error.walk((e) => e instanceof ExecutionRevertedError))
      throw new FaucetRefusedError(`${to} refused ${shownAs}: it is a contract that takes none`);
    throw new FaucetError(
      `the faucet could not send ${amount} ${shownAs} to ${to} on the devnet at ${info.rpcUrl}: ${reasonOf(error)}. ` +
        'Is that devnet still running, and is the info file from this run of it?',
    );
  }
  const receipt = await publicClient.waitForTransactionReceipt({ hash }).catch((error: unknown) => {
    throw new FaucetError(`the faucet sent ${hash} but saw no receipt for it at ${info.rpcUrl}: ${reasonOf(error)}`);
  });
  if (receipt.status !== 'success')
    throw new FaucetError(`the faucet transaction ${hash} (${amount} ${shownAs} to ${to}) reverted`);
  return hash;
}

/** The error's own words, without a closing period: the faucet's message goes on after them. */
function reasonOf(error: unknown): string {
  const reason =
    error instanceof BaseError ? error.shortMessage : error instanceof Error ? error.message : String(error);
  return reason.replace(/\.$/, '');
}
