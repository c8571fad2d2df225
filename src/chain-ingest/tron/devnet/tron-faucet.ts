import type { Hash } from 'viem';
import type { DevnetInfo } from '../../evm/devnet/devnet-info.ts';
import { FaucetError } from '../../evm/devnet/errors.ts';
import { fundFromFaucet } from '../../evm/devnet/faucet.ts';
import { tronAddressProblem, tronToEvm } from '../address.ts';

/** What the local Tron's faucet gives: TRX (anvil's native coin, one wei a sun) and the test tokens the network offers. */
export const tronFaucetAssets = ['trx', 'usdt', 'usdc'] as const;
export type TronFaucetAsset = (typeof tronFaucetAssets)[number];

/**
 * Funds the T… address `to` on the local Tron (`devnet`: its anvil and accounts): TRX from the
 * deployer, or test USDT/USDC minted by it; `amount` in sun or the token's 10^-6. The address is
 * turned into its 0x form here, at the edge, for the node. Throws {@link FaucetError}.
 */
export async function fundFromTronFaucet(
  devnet: DevnetInfo,
  parameters: { to: string; asset: TronFaucetAsset; amount: bigint },
): Promise<Hash> {
  const { to, asset, amount } = parameters;
  const problem = tronAddressProblem(to);
  if (problem !== null) throw new FaucetError(`fundFromTronFaucet: "to" ${problem}`);
  if (!tronFaucetAssets.includes(asset))
    throw new FaucetError(
      `fundFromTronFaucet: asset ${JSON.stringify(asset)} is not one of ${tronFaucetAssets.join(', ')}`,
    );
  return fundFromFaucet(devnet, { to: tronToEvm(to), asset: asset === 'trx' ? 'eth' : asset, amount, shownAs: asset });
}
