import { defineEvmNetwork } from './define-network.ts';

/**
 * Arbitrum One.
 *
 * Confirmations: 20 blocks (~5 s at ~0.25 s blocks) on the sequencer's output. Arbitrum docs
 * ("Finality and chain reorganizations"): a node exposes three levels as the `latest`, `safe` and
 * `finalized` tags; the sequencer's output is a soft confirmation, which becomes final once its
 * batch is posted to L1 and that L1 block finalizes (tens of minutes). A sequenced block changes
 * only if the sequencer fails to post it as published. Arbitrum blocks are produced on demand, so
 * block counts say little about time here; 20 blocks lets the node's view settle. Raise this, or
 * confirm on the `safe`/`finalized` tags, for large amounts.
 */
export const arbitrum = defineEvmNetwork({
  network: 'arbitrum',
  chainId: 42_161,
  name: 'Arbitrum One',
  environment: 'live',
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  explorer: { name: 'Arbiscan', txUrl: 'https://arbiscan.io/tx/{hash}' },
  confirmations: 20,
  confirmationsSource:
    'sequencer soft confirmation (Arbitrum docs "Finality and chain reorganizations"), 20 blocks (~5 s); L1 finality via the `finalized` tag takes tens of minutes',
  blockTimeMs: 250,
  assets: [
    { symbol: 'ETH', name: 'Ether', currency: 'eth', address: 'native', decimals: 18 },
    // Circle, "USDC Contract Addresses": Arbitrum (native USDC).
    {
      symbol: 'USDC',
      name: 'USD Coin',
      currency: 'usdc',
      address: '0xaf88d065e77c8cC2239327C5EDb3A432268e5831',
      decimals: 6,
    },
    // USDC bridged over the Arbitrum canonical bridge before Circle's native issuance (Arbiscan "USD Coin (Arb1)").
    {
      symbol: 'USDC.e',
      name: 'Bridged USDC',
      currency: 'usdc',
      address: '0xFF970A61A04b1cA14834A43f5dE4533eBDDB5CC8',
      decimals: 6,
    },
    // Tether: USD₮ on Arbitrum, upgraded in place to USDT0 (USDT0 docs, "Deployments"); 6 decimals.
    {
      symbol: 'USDT',
      name: 'USD₮0',
      currency: 'usdt',
      address: '0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9',
      decimals: 6,
    },
    // Sky/MakerDAO arbitrum-dai-bridge README, Deployments, Mainnet `l2Dai`.
    {
      symbol: 'DAI',
      name: 'Dai Stablecoin',
      currency: 'dai',
      address: '0xDA10009cBd5D07dd0CeCc66161FC93D7c9000da1',
      decimals: 18,
    },
    // Arbitrum One's canonical WETH, the gateway's L2 token for Ethereum WETH (Arbiscan "Wrapped Ether").
    {
      symbol: 'WETH',
      name: 'Wrapped Ether',
      currency: 'weth',
      address: '0x82aF49447D8a07e3bd95BD0d56f35241523fBab1',
      decimals: 18,
    },
  ],
});

/**
 * Arbitrum Sepolia testnet.
 *
 * Confirmations: 2 blocks. Testnet coins have no value.
 * Assets: ETH and Circle's testnet USDC.
 */
export const arbitrumSepolia = defineEvmNetwork({
  network: 'arbitrum-sepolia',
  chainId: 421_614,
  name: 'Arbitrum Sepolia',
  environment: 'test',
  nativeCurrency: { name: 'Arbitrum Sepolia Ether', symbol: 'ETH', decimals: 18 },
  explorer: { name: 'Arbiscan', txUrl: 'https://sepolia.arbiscan.io/tx/{hash}' },
  confirmations: 2,
  confirmationsSource: 'testnet: 2 blocks on the sequencer output keeps test checkouts quick; coins have no value',
  blockTimeMs: 250,
  assets: [
    { symbol: 'ETH', name: 'Arbitrum Sepolia Ether', currency: 'eth', address: 'native', decimals: 18 },
    // Circle, "USDC Contract Addresses", Testnet: Arbitrum Sepolia.
    {
      symbol: 'USDC',
      name: 'USD Coin',
      currency: 'usdc',
      address: '0x75faf114eafb1BDbe2F0316DF893fd58CE46AA4d',
      decimals: 6,
    },
  ],
});
