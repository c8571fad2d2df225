import { defineEvmNetwork } from './define-network.ts';

/**
 * Base mainnet (OP Stack).
 *
 * Confirmations: 10 blocks (~20 s at 2 s blocks) on the sequencer's unsafe head. OP Stack docs
 * ("Transaction finality"): a block is unsafe when the sequencer publishes it, safe once its batch
 * is on L1 (minutes), finalized when that L1 block is finalized (~20-30 min). An unsafe block
 * reorgs only if what the sequencer published differs from what it posts to L1 (a sequencer fault
 * or equivocation); waiting 20-30 min for L1 finality would defeat the point of paying on an L2.
 * Raise this, or confirm on the `safe` tag, for large amounts.
 */
export const base = defineEvmNetwork({
  network: 'base',
  chainId: 8453,
  name: 'Base',
  environment: 'live',
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  explorer: { name: 'Basescan', txUrl: 'https://basescan.org/tx/{hash}' },
  confirmations: 10,
  confirmationsSource:
    'OP Stack unsafe (sequencer) head, 10 blocks (~20 s); safe = batch on L1 (minutes), finalized = L1 finalized (~20-30 min) per OP Stack "Transaction finality" docs',
  blockTimeMs: 2_000,
  assets: [
    { symbol: 'ETH', name: 'Ether', currency: 'eth', address: 'native', decimals: 18 },
    // Circle, "USDC Contract Addresses": Base (native USDC).
    {
      symbol: 'USDC',
      name: 'USD Coin',
      currency: 'usdc',
      address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      decimals: 6,
    },
    // USDbC ("USD Base Coin" on Basescan): USDC bridged from Ethereum over the Base standard bridge
    // before Circle issued native USDC on Base. Bridged USDC, hence currency `usdc`.
    {
      symbol: 'USDbC',
      name: 'USD Base Coin',
      currency: 'usdc',
      address: '0xd9aAEc86B65D86f6A7B5B1b0c42FFA531710b6CA',
      decimals: 6,
    },
    // Dai bridged over the Base standard bridge (Superchain Token List, ethereum-optimism.github.io).
    {
      symbol: 'DAI',
      name: 'Dai Stablecoin',
      currency: 'dai',
      address: '0x50c5725949A6F0c72E6C4a641F24049A917DB0Cb',
      decimals: 18,
    },
    // OP Stack predeploy WETH9 (OP Stack specs, "Predeploys").
    {
      symbol: 'WETH',
      name: 'Wrapped Ether',
      currency: 'weth',
      address: '0x4200000000000000000000000000000000000006',
      decimals: 18,
    },
  ],
});

/**
 * Base Sepolia testnet.
 *
 * Confirmations: 2 blocks (~4 s). Testnet coins have no value.
 * Assets: ETH and Circle's testnet USDC.
 */
export const baseSepolia = defineEvmNetwork({
  network: 'base-sepolia',
  chainId: 84_532,
  name: 'Base Sepolia',
  environment: 'test',
  nativeCurrency: { name: 'Sepolia Ether', symbol: 'ETH', decimals: 18 },
  explorer: { name: 'Basescan', txUrl: 'https://sepolia.basescan.org/tx/{hash}' },
  confirmations: 2,
  confirmationsSource: 'testnet: 2 blocks (~4 s) on the unsafe head keeps test checkouts quick; coins have no value',
  blockTimeMs: 2_000,
  assets: [
    { symbol: 'ETH', name: 'Sepolia Ether', currency: 'eth', address: 'native', decimals: 18 },
    // Circle, "USDC Contract Addresses", Testnet: Base Sepolia.
    {
      symbol: 'USDC',
      name: 'USD Coin',
      currency: 'usdc',
      address: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
      decimals: 6,
    },
  ],
});
