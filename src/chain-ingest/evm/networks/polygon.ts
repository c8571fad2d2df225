import { defineEvmNetwork } from './define-network.ts';

/**
 * Polygon PoS mainnet.
 *
 * Confirmations: 32 blocks (~64 s at 2 s blocks). Since PIP-11 ("Deterministic finality via
 * Milestones", Polygon Improvement Proposals) Heimdall validators vote milestones that Bor will
 * never reorg past, and Bor reports the latest milestone as the `finalized` block; milestones
 * land within seconds to about a minute. Before milestones Polygon's finality was probabilistic
 * and it saw reorgs of 100+ blocks, so a count alone is not a proof: 32 blocks sits past a
 * milestone in normal operation, and a follower should prefer the `finalized` tag where its RPC
 * serves it.
 */
export const polygon = defineEvmNetwork({
  network: 'polygon',
  chainId: 137,
  name: 'Polygon PoS',
  environment: 'live',
  nativeCurrency: { name: 'POL', symbol: 'POL', decimals: 18 },
  explorer: { name: 'PolygonScan', txUrl: 'https://polygonscan.com/tx/{hash}' },
  confirmations: 32,
  confirmationsSource:
    'milestone finality (PIP-11): Bor never reorgs past a Heimdall milestone, reported as the `finalized` tag; 32 blocks (~64 s) sits past a milestone in normal operation',
  blockTimeMs: 2_000,
  assets: [
    { symbol: 'POL', name: 'POL', currency: 'pol', address: 'native', decimals: 18 },
    // Circle, "USDC Contract Addresses": Polygon PoS (native USDC, issued by Circle).
    {
      symbol: 'USDC',
      name: 'USD Coin',
      currency: 'usdc',
      address: '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359',
      decimals: 6,
    },
    // Polygon PoS bridge "USD Coin (PoS)", which Circle and Polygon docs call bridged USDC.e.
    {
      symbol: 'USDC.e',
      name: 'USD Coin (PoS)',
      currency: 'usdc',
      address: '0x2791Bca1f2de4661ED88A30C99A7a9449Aa84174',
      decimals: 6,
    },
    // Tether: "(PoS) Tether USD", upgraded in place to USDT0 in 2025 (USDT0 docs; Guardian
    // "USDT0 Polygon Upgrade" review, June 2025): same address, still 6 decimals.
    {
      symbol: 'USDT',
      name: 'USD₮0',
      currency: 'usdt',
      address: '0xc2132D05D31c914a87C6611C10748AEb04B58e8F',
      decimals: 6,
    },
    // Polygon PoS bridge mapping of Sky/MakerDAO DAI: "(PoS) Dai Stablecoin".
    {
      symbol: 'DAI',
      name: '(PoS) Dai Stablecoin',
      currency: 'dai',
      address: '0x8f3Cf7ad23Cd3CaDbD9735AFf958023239c6A063',
      decimals: 18,
    },
    // Polygon PoS bridge mapping of Ethereum WETH ("MaticWETH", "Wrapped Ether").
    {
      symbol: 'WETH',
      name: 'Wrapped Ether',
      currency: 'weth',
      address: '0x7ceB23fD6bC0adD59E62ac25578270cFf1b9f619',
      decimals: 18,
    },
  ],
});

/**
 * Polygon Amoy testnet.
 *
 * Confirmations: 5 blocks (~10 s). Testnet coins have no value; short waits keep tests quick.
 * Assets: POL and Circle's testnet USDC (no issuer-run USDT or DAI exists on Amoy).
 */
export const polygonAmoy = defineEvmNetwork({
  network: 'polygon-amoy',
  chainId: 80_002,
  name: 'Polygon Amoy',
  environment: 'test',
  nativeCurrency: { name: 'POL', symbol: 'POL', decimals: 18 },
  explorer: { name: 'PolygonScan', txUrl: 'https://amoy.polygonscan.com/tx/{hash}' },
  confirmations: 5,
  confirmationsSource: 'testnet: 5 blocks (~10 s) keeps test checkouts quick; coins have no value',
  blockTimeMs: 2_000,
  assets: [
    { symbol: 'POL', name: 'POL', currency: 'pol', address: 'native', decimals: 18 },
    // Circle, "USDC Contract Addresses", Testnet: Polygon PoS Amoy.
    {
      symbol: 'USDC',
      name: 'USD Coin',
      currency: 'usdc',
      address: '0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582',
      decimals: 6,
    },
  ],
});
