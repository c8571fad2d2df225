import { defineEvmNetwork } from './define-network.ts';

/**
 * OP Mainnet (Optimism).
 *
 * Confirmations: 10 blocks (~20 s at 2 s blocks) on the sequencer's unsafe head, as for Base:
 * OP Stack docs ("Transaction finality"): unsafe when the sequencer publishes, safe once the batch
 * is on L1, finalized when that L1 block finalizes (~20-30 min). Raise this, or confirm on the
 * `safe` tag, for large amounts.
 *
 * USDT: Tether's current deployment is USDT0 (USDT0 docs, "Deployments"), at its own address.
 * The older "Tether USD" bridged over the OP standard bridge (0x94b008aA00579c1307B0EF2c499aD98a8ce58e58)
 * still exists but is not listed: it is not issuer-supported and its liquidity has moved to USDT0.
 */
export const optimism = defineEvmNetwork({
  network: 'optimism',
  chainId: 10,
  name: 'Optimism',
  environment: 'live',
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  explorer: { name: 'Optimistic Etherscan', txUrl: 'https://optimistic.etherscan.io/tx/{hash}' },
  confirmations: 10,
  confirmationsSource:
    'OP Stack unsafe (sequencer) head, 10 blocks (~20 s); safe = batch on L1 (minutes), finalized = L1 finalized (~20-30 min) per OP Stack "Transaction finality" docs',
  blockTimeMs: 2_000,
  assets: [
    { symbol: 'ETH', name: 'Ether', currency: 'eth', address: 'native', decimals: 18 },
    // Circle, "USDC Contract Addresses": OP Mainnet (native USDC).
    {
      symbol: 'USDC',
      name: 'USD Coin',
      currency: 'usdc',
      address: '0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85',
      decimals: 6,
    },
    // USDC bridged over the OP standard bridge before native issuance. Optimism docs (Standard Bridge,
    // "USDC on OP Mainnet") call it USDC.e and say it is being deprecated; still accepted while it circulates.
    {
      symbol: 'USDC.e',
      name: 'Bridged USDC',
      currency: 'usdc',
      address: '0x7F5c764cBc14f9669B88837ca1490cCa17c31607',
      decimals: 6,
    },
    // Tether USDT0 on OP Mainnet (USDT0 docs, "Deployments"); 6 decimals.
    {
      symbol: 'USDT',
      name: 'USD₮0',
      currency: 'usdt',
      address: '0x01bFF41798a0BcF287b996046Ca68b395DbC1071',
      decimals: 6,
    },
    // Sky/MakerDAO L2 Dai on Optimism (optimism-dai-bridge; same address as on Arbitrum).
    {
      symbol: 'DAI',
      name: 'Dai Stablecoin',
      currency: 'dai',
      address: '0xDA10009cBd5D07dd0CeCc66161FC93D7c9000da1',
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
 * OP Sepolia testnet.
 *
 * Confirmations: 2 blocks (~4 s). Testnet coins have no value.
 * Assets: ETH and Circle's testnet USDC.
 */
export const optimismSepolia = defineEvmNetwork({
  network: 'optimism-sepolia',
  chainId: 11_155_420,
  name: 'OP Sepolia',
  environment: 'test',
  nativeCurrency: { name: 'Sepolia Ether', symbol: 'ETH', decimals: 18 },
  explorer: { name: 'Blockscout', txUrl: 'https://optimism-sepolia.blockscout.com/tx/{hash}' },
  confirmations: 2,
  confirmationsSource: 'testnet: 2 blocks (~4 s) on the unsafe head keeps test checkouts quick; coins have no value',
  blockTimeMs: 2_000,
  assets: [
    { symbol: 'ETH', name: 'Sepolia Ether', currency: 'eth', address: 'native', decimals: 18 },
    // Circle, "USDC Contract Addresses", Testnet: OP Sepolia.
    {
      symbol: 'USDC',
      name: 'USD Coin',
      currency: 'usdc',
      address: '0x5fd84259d66Cd46123540766Be93DFE6D43130D7',
      decimals: 6,
    },
  ],
});
