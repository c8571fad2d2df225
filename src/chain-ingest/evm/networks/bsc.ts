import { defineEvmNetwork } from './define-network.ts';

/**
 * BNB Smart Chain mainnet.
 *
 * Confirmations: 15 blocks (~11 s at 0.75 s blocks). BNB Chain docs ("Finality API", BSC API
 * list): with Fast Finality (BEP-126) block n is economically final by block n+2, reported as
 * the `finalized` tag; when fast-finality votes are missing the chain falls back to
 * probabilistic finality. 15 blocks covers fast finality with a wide margin for vote
 * propagation; a follower should prefer the `finalized` tag where available.
 *
 * Decimals: the Binance-Peg stablecoins on BSC have 18 decimals, not 6.
 */
export const bsc = defineEvmNetwork({
  network: 'bsc',
  chainId: 56,
  name: 'BNB Smart Chain',
  environment: 'live',
  nativeCurrency: { name: 'BNB', symbol: 'BNB', decimals: 18 },
  explorer: { name: 'BscScan', txUrl: 'https://bscscan.com/tx/{hash}' },
  confirmations: 15,
  confirmationsSource:
    'fast finality (BEP-126, BNB Chain docs "Finality API"): block n is final by n+2 and reported as the `finalized` tag; 15 blocks (~11 s) leaves margin for vote propagation',
  blockTimeMs: 750,
  assets: [
    { symbol: 'BNB', name: 'BNB', currency: 'bnb', address: 'native', decimals: 18 },
    // Binance-Peg USD Coin (issued by Binance against USDC, not by Circle); BscScan token page, 18 decimals.
    {
      symbol: 'USDC',
      name: 'Binance-Peg USD Coin',
      currency: 'usdc',
      address: '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d',
      decimals: 18,
    },
    // Tether USD on BSC (BscScan "Binance-Peg BSC-USD"), 18 decimals.
    {
      symbol: 'USDT',
      name: 'Tether USD',
      currency: 'usdt',
      address: '0x55d398326f99059fF775485246999027B3197955',
      decimals: 18,
    },
    // Binance-Peg Dai Token; BscScan token page, 18 decimals.
    {
      symbol: 'DAI',
      name: 'Binance-Peg Dai Token',
      currency: 'dai',
      address: '0x1AF3F329e8BE154074D8769D1FFa4eE058B1DBc3',
      decimals: 18,
    },
    // Binance-Peg Ethereum Token (on-chain symbol "ETH"): an ERC-20 claim on ETH, so `weth`.
    {
      symbol: 'WETH',
      name: 'Binance-Peg Ethereum Token',
      currency: 'weth',
      address: '0x2170Ed0880ac9A755fd29B2688956BD959F933F8',
      decimals: 18,
    },
  ],
});

/**
 * BNB Smart Chain testnet.
 *
 * Confirmations: 3 blocks. Testnet coins have no value; short waits keep tests quick.
 * Assets: tBNB and the BNB Chain testnet faucet's BEP-20 test tokens (testnet.bnbchain.org
 * faucet; the same addresses PancakeSwap's SDK uses as `USDC_TESTNET`), both 18 decimals like
 * their mainnet counterparts.
 */
export const bscTestnet = defineEvmNetwork({
  network: 'bsc-testnet',
  chainId: 97,
  name: 'BNB Smart Chain Testnet',
  environment: 'test',
  nativeCurrency: { name: 'Test BNB', symbol: 'tBNB', decimals: 18 },
  explorer: { name: 'BscScan', txUrl: 'https://testnet.bscscan.com/tx/{hash}' },
  confirmations: 3,
  confirmationsSource: 'testnet: 3 blocks keeps test checkouts quick; fast finality (BEP-126) is active on testnet too',
  blockTimeMs: 750,
  assets: [
    { symbol: 'tBNB', name: 'Test BNB', currency: 'bnb', address: 'native', decimals: 18 },
    {
      symbol: 'USDC',
      name: 'USD Coin (testnet faucet)',
      currency: 'usdc',
      address: '0x64544969ed7EBf5f083679233325356EbE738930',
      decimals: 18,
    },
    {
      symbol: 'USDT',
      name: 'Tether USD (testnet faucet)',
      currency: 'usdt',
      address: '0x337610d27c682E347C9cD60BD4b3b107C9d34dDd',
      decimals: 18,
    },
  ],
});
