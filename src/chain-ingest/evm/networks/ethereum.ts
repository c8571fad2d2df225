import { defineEvmNetwork } from './define-network.ts';

/**
 * Ethereum mainnet.
 *
 * Confirmations: 12 blocks (~2.4 min at 12 s slots), the long-standing payment-industry
 * convention for Ethereum deposits. This is not finality: a block is finalized after two
 * epochs (2 x 32 slots = 64 blocks, ~12.8 min; Ethereum consensus specs, Casper FFG), which is
 * what the `finalized` block tag reports. Since the merge, mainnet reorgs are rare and shallow
 * (typically a single block), so 12 blocks leaves a wide margin while keeping a checkout from
 * waiting a quarter of an hour. A merchant who needs economic finality
 * should raise this to 64 or confirm on the `finalized` tag.
 */
export const ethereum = defineEvmNetwork({
  network: 'ethereum',
  chainId: 1,
  name: 'Ethereum',
  environment: 'live',
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  explorer: { name: 'Etherscan', txUrl: 'https://etherscan.io/tx/{hash}' },
  confirmations: 12,
  confirmationsSource:
    'payment-industry convention of 12 blocks (~2.4 min); finality is 2 epochs = 64 blocks (~12.8 min, Ethereum consensus specs) via the `finalized` tag',
  blockTimeMs: 12_000,
  assets: [
    { symbol: 'ETH', name: 'Ether', currency: 'eth', address: 'native', decimals: 18 },
    // Circle, "USDC Contract Addresses" (developers.circle.com/stablecoins/usdc-contract-addresses): Ethereum.
    {
      symbol: 'USDC',
      name: 'USD Coin',
      currency: 'usdc',
      address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
      decimals: 6,
    },
    // Tether, "Supported protocols" (tether.to/en/supported-protocols): Ethereum ERC-20 TetherToken.
    {
      symbol: 'USDT',
      name: 'Tether USD',
      currency: 'usdt',
      address: '0xdAC17F958D2ee523a2206206994597C13D831ec7',
      decimals: 6,
    },
    // Sky (formerly MakerDAO) chainlog `MCD_DAI` (chainlog.sky.money): multi-collateral Dai.
    {
      symbol: 'DAI',
      name: 'Dai Stablecoin',
      currency: 'dai',
      address: '0x6B175474E89094C44Da98b954EedeAC495271d0F',
      decimals: 18,
    },
    // Canonical WETH9 (Etherscan verified contract "WETH9"; ethereum.org "Wrapped Ether (WETH)").
    {
      symbol: 'WETH',
      name: 'Wrapped Ether',
      currency: 'weth',
      address: '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2',
      decimals: 18,
    },
  ],
});

/**
 * Ethereum Sepolia testnet.
 *
 * Confirmations: 3 blocks (~36 s). Testnet coins have no value; a short wait keeps test
 * checkouts quick while still exercising the confirmation path.
 *
 * Assets: ETH and Circle's testnet USDC only. There is no issuer-run USDT or DAI on Sepolia
 * (the ones in circulation are third-party mocks), so none is listed.
 */
export const ethereumSepolia = defineEvmNetwork({
  network: 'ethereum-sepolia',
  chainId: 11_155_111,
  name: 'Ethereum Sepolia',
  environment: 'test',
  nativeCurrency: { name: 'Sepolia Ether', symbol: 'ETH', decimals: 18 },
  explorer: { name: 'Etherscan', txUrl: 'https://sepolia.etherscan.io/tx/{hash}' },
  confirmations: 3,
  confirmationsSource: 'testnet: 3 blocks (~36 s) keeps test checkouts quick; coins have no value',
  blockTimeMs: 12_000,
  assets: [
    { symbol: 'ETH', name: 'Sepolia Ether', currency: 'eth', address: 'native', decimals: 18 },
    // Circle, "USDC Contract Addresses", Testnet: Ethereum Sepolia (faucet.circle.com).
    {
      symbol: 'USDC',
      name: 'USD Coin',
      currency: 'usdc',
      address: '0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238',
      decimals: 6,
    },
  ],
});
