import { getAddress, isAddress, type Address } from 'viem';
import { LOCAL_EXPLORER_TX_URL } from '../../network-definition.ts';
import { defineEvmNetwork, NetworkDefinitionError, type EvmNetwork } from './define-network.ts';

/** Hardhat's and Anvil's default chain id. */
export const DEVNET_CHAIN_ID = 31_337;

/** Test token contracts deployed on the local devnet; known only once it is running. */
export type DevnetContracts = { usdc: string; usdt: string; dai: string };

/**
 * The local devnet (Hardhat / Anvil, chain id 31337): ETH plus test USDC (6 decimals), USDT (6)
 * and DAI (18) at the addresses the devnet deployment reported. Addresses may be given in any
 * case; they are checksummed here.
 *
 * Confirmations: 1 (mined). A local automining node has one block producer and never reorgs.
 */
export function devnetNetwork(contracts: DevnetContracts, options: { explorerTxUrl?: string } = {}): EvmNetwork {
  const usdc = contractAddress(contracts, 'usdc');
  const usdt = contractAddress(contracts, 'usdt');
  const dai = contractAddress(contracts, 'dai');
  return defineEvmNetwork({
    network: 'devnet',
    chainId: DEVNET_CHAIN_ID,
    name: 'Local Devnet',
    environment: 'test',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    explorer: { name: 'Local explorer', txUrl: options.explorerTxUrl ?? LOCAL_EXPLORER_TX_URL },
    confirmations: 1,
    confirmationsSource: 'local automining node: a single block producer that never reorgs, so mined is final',
    blockTimeMs: 1_000,
    assets: [
      { symbol: 'ETH', name: 'Ether', currency: 'eth', address: 'native', decimals: 18 },
      { symbol: 'USDC', name: 'Test USD Coin', currency: 'usdc', address: usdc, decimals: 6 },
      { symbol: 'USDT', name: 'Test Tether USD', currency: 'usdt', address: usdt, decimals: 6 },
      { symbol: 'DAI', name: 'Test Dai Stablecoin', currency: 'dai', address: dai, decimals: 18 },
    ],
  });
}

function contractAddress(contracts: DevnetContracts, key: keyof DevnetContracts): Address {
  const value: unknown = contracts[key];
  if (typeof value !== 'string' || !isAddress(value, { strict: false })) {
    throw new NetworkDefinitionError(
      `network "devnet": contracts.${key} must be a 0x-prefixed 20-byte address, got ${JSON.stringify(value)}; check the devnet deployment output`,
    );
  }
  return getAddress(value);
}
