import { LOCAL_EXPLORER_TX_URL, NetworkDefinitionError, shownTransactionHash } from '../network-definition.ts';
import { parseTronAddress, tronAddressProblem, type TronAddress } from './address.ts';
import { defineTronNetwork, type TronNetwork } from './define-network.ts';

/*
 * Chain ids: what java-tron's JSON-RPC `eth_chainId` answers, the last 4 bytes of the genesis
 * block id (tronprotocol documentation, JSON-RPC "eth_chainId": Mainnet 0x2b6653dc, Nile
 * 0xcd8690dc, Shasta 0x94a9059e). Wallets use the same numbers (wallet-cli's `tron:3448148188`).
 * The local chain (anvil behind the Tron-flavoured proxy in `devnet/`) takes ASCII "TrnL"
 * (0x54726e4c), like Solana's local "SolL": no registry uses it, and it is not Nile's, so a
 * configuration can never mistake the local chain for the public testnet.
 */
export const TRON_MAINNET_CHAIN_ID = 0x2b66_53dc; // 728126428
export const TRON_NILE_CHAIN_ID = 0xcd86_90dc; // 3448148188
export const TRON_LOCAL_CHAIN_ID = 0x5472_6e4c; // 1416785484

const TRX = { name: 'Tronix', symbol: 'TRX', decimals: 6 } as const;

/*
 * Finality: 27 Super Representatives produce a block every 3 s; a block is solidified
 * (irreversible) once 70% of them, 19 of 27, have produced blocks on top of it (TIP-62 "Tron
 * consensus algorithm introduction"; java-tron `ChainConstant.SOLIDIFIED_THRESHOLD = 70` with
 * `MAX_ACTIVE_WITNESS_NUM = 27`: the solid block is the 9th-lowest of the SRs' latest blocks),
 * about 18-19 blocks (~57 s) behind the head in steady state. The node's JSON-RPC answers the tag
 * `finalized` with that latest solidified block (documentation-en, eth_getBlockByNumber), which
 * the rail uses; 19 is the fallback depth. Nile runs the same consensus code.
 */
const CONFIRMATIONS = 19;
const CONFIRMATIONS_SOURCE =
  'TIP-62: a block is solidified once 70% of the 27 SRs (19) built on it; the JSON-RPC tag finalized answers the latest solidified block';
const BLOCK_TIME_MS = 3_000;

/**
 * Tron mainnet. Endpoints come from `WEIR_RPC_728126428` or the RPC config file (the full node's
 * JSON-RPC, e.g. `https://<node>/jsonrpc`); none is built in (TronGrid needs an API key).
 */
export const tronMainnet = defineTronNetwork({
  network: 'tron-mainnet',
  chainId: TRON_MAINNET_CHAIN_ID,
  name: 'Tron',
  environment: 'live',
  nativeCurrency: TRX,
  explorer: { name: 'Tronscan', txUrl: 'https://tronscan.org/#/transaction/{hash}' },
  confirmations: CONFIRMATIONS,
  confirmationsSource: CONFIRMATIONS_SOURCE,
  blockTimeMs: BLOCK_TIME_MS,
  assets: [
    // TRX: 1 TRX = 1,000,000 sun (Tron docs, "TRX"; OpenZeppelin "TVM Differences": 6 decimals, not 18).
    { symbol: 'TRX', name: 'Tronix', currency: 'trx', address: 'native', decimals: 6 },
    // Tether, "Supported protocols" (tether.to/en/supported-protocols): Tron TRC-20, 6 decimals;
    // hex 41a614f803b6fd780986a42c78ec9c7f77e6ded13c.
    {
      symbol: 'USDT',
      name: 'Tether USD',
      currency: 'usdt',
      address: parseTronAddress('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'),
      decimals: 6,
    },
    // Circle's USDC on Tron (hex 413487b63d30b5b2c87fb7ffa8bcfade38eaac1abe), 6 decimals, as
    // Circle's "USDC Contract Addresses" listed it and wallet code still names it. Circle
    // stopped minting it on 2024-02-20 and ended transfers and redemptions through Circle Mint in
    // February 2025 ("Circle to discontinue USDC on TRON"); the contract still moves the tokens
    // in circulation, so it is listed, but merchants should prefer USDT on Tron.
    {
      symbol: 'USDC',
      name: 'USD Coin',
      currency: 'usdc',
      address: parseTronAddress('TEkxiTehnzSmSe2XqrBj4w32RUN966rdz8'),
      decimals: 6,
    },
  ],
});

/**
 * Nile, Tron's public testnet. TRX from the Nile faucet (nileex.io). Tether and Circle issue
 * nothing on Nile: no USDT or USDC there is canonical. The "USDT" listed is the test token the
 * Nile faucet hands out (TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf, 6 decimals; also named as Nile's
 * Tether test contract in Turnkey's Tron policy examples); other Nile "USDT"s exist (wallet SDKs
 * name TXLAQ63Xg1NAzckPwKHvzw7CSEmLMEqcdj). No Nile USDC is listed.
 */
export const tronNile = defineTronNetwork({
  network: 'tron-nile',
  chainId: TRON_NILE_CHAIN_ID,
  name: 'Tron Nile',
  environment: 'test',
  nativeCurrency: TRX,
  explorer: { name: 'Tronscan (Nile)', txUrl: 'https://nile.tronscan.org/#/transaction/{hash}' },
  confirmations: CONFIRMATIONS,
  confirmationsSource: CONFIRMATIONS_SOURCE,
  blockTimeMs: BLOCK_TIME_MS,
  assets: [
    { symbol: 'TRX', name: 'Nile TRX', currency: 'trx', address: 'native', decimals: 6 },
    {
      symbol: 'USDT',
      name: 'Test Tether USD',
      currency: 'usdt',
      address: parseTronAddress('TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf'),
      decimals: 6,
    },
  ],
});

/** Every public Tron network Weir knows. Not in the live registry yet: the Tron rail adds them. */
export const TRON_NETWORKS: readonly TronNetwork[] = Object.freeze([tronMainnet, tronNile]);

/** Chain ids a Tron RPC configuration may name: the public networks plus the local one. */
export const KNOWN_TRON_CHAIN_IDS: readonly number[] = Object.freeze([
  ...TRON_NETWORKS.map((n) => n.chainId),
  TRON_LOCAL_CHAIN_ID,
]);

/**
 * A transaction or block hash of chain `chainId` as merchants and payers read it
 * (`shownTransactionHash`; a Tron block id is 64 hex digits without 0x too): Tron's chains are only
 * these, so a record shows its hashes so without the configuration at hand, also for a network no
 * longer offered.
 */
export const shownHashOn = (chainId: number, hash: string): string =>
  shownTransactionHash(KNOWN_TRON_CHAIN_IDS.includes(chainId) ? 'tron' : null, hash);

/** Test tokens of the local chain, in T… form; known only once it is deployed. */
export type TronLocalTokens = { usdt: string; usdc: string };

/**
 * The local chain: anvil behind the Tron-flavoured proxy (`devnet/`), with TRX (anvil's native
 * coin: one wei stands for one sun, so amounts stay integers) and test USDT and USDC at the
 * contracts deployed there.
 * Its `finalized` block is `confirmations` behind the head, as the proxy answers it.
 */
export function tronLocalNetwork(
  tokens: TronLocalTokens,
  options: { confirmations?: number; explorerTxUrl?: string } = {},
): TronNetwork {
  const token = (key: keyof TronLocalTokens): TronAddress => {
    const value: unknown = tokens[key];
    const problem = typeof value === 'string' ? tronAddressProblem(value) : 'is not a string';
    if (problem !== null)
      throw new NetworkDefinitionError(`network "tron-local": tokens.${key} ${JSON.stringify(value)} ${problem}`);
    return value as TronAddress;
  };
  return defineTronNetwork({
    network: 'tron-local',
    chainId: TRON_LOCAL_CHAIN_ID,
    name: 'Local Tron',
    environment: 'test',
    nativeCurrency: TRX,
    explorer: { name: 'Local chain', txUrl: options.explorerTxUrl ?? LOCAL_EXPLORER_TX_URL },
    confirmations: options.confirmations ?? CONFIRMATIONS,
    confirmationsSource: 'local chain: the proxy answers finalized this many blocks behind the head',
    blockTimeMs: BLOCK_TIME_MS,
    assets: [
      { symbol: 'TRX', name: 'Local TRX', currency: 'trx', address: 'native', decimals: 6 },
      { symbol: 'USDT', name: 'Test Tether USD', currency: 'usdt', address: token('usdt'), decimals: 6 },
      { symbol: 'USDC', name: 'Test USD Coin', currency: 'usdc', address: token('usdc'), decimals: 6 },
    ],
  });
}
