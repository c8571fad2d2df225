import { isAddress, type Address } from '@solana/kit';
import { NetworkDefinitionError } from '../network-definition.ts';
import { defineSolanaNetwork, TOKEN_PROGRAM_ADDRESS, type SolanaNetwork } from './define-network.ts';

/*
 * Chain ids. Solana clusters have no numeric chain id, and the reference API names none for
 * Solana (its chains carry `type: "solana"` and the currency `sol`, with numeric `chainId`s
 * everywhere). Weir uses the numbers the wider tooling already uses for Solana: the Hyperlane
 * registry's `solanamainnet` (1399811149) and `solanadevnet` (1399811151), which are also the
 * `networkId`s of common market-data APIs. They read as ASCII "SolM" (0x536F6C4D) and "SolO"; the
 * local cluster takes "SolL" (1399811148), which no registry uses.
 */
export const SOLANA_MAINNET_CHAIN_ID = 1_399_811_149;
export const SOLANA_DEVNET_CHAIN_ID = 1_399_811_151;
export const SOLANA_LOCALNET_CHAIN_ID = 1_399_811_148;

const SOL = { name: 'Solana', symbol: 'SOL', decimals: 9 } as const;

/*
 * Commitment: a payment is seen at `confirmed` (a supermajority of stake voted on its block;
 * Solana docs, "Commitment Status") and final at `finalized` (the block is rooted, 31+ confirmed
 * blocks on top, about 13 s). A confirmed block has never been rolled back on mainnet-beta, but it
 * can be in principle, so credit waits for finalized as the issue asks.
 */
const COMMITMENT_SOURCE =
  'Solana docs, "Commitment Status": seen at confirmed (supermajority vote), final at finalized (rooted, ~13 s)';

/**
 * Solana mainnet-beta. RPC endpoints come from `WEIR_RPC_1399811149` or the RPC config file,
 * like the EVM networks; none is built in (the public https://api.mainnet-beta.solana.com is
 * rate-limited and not meant for production traffic).
 */
export const solanaMainnet = defineSolanaNetwork({
  network: 'solana-mainnet',
  chainId: SOLANA_MAINNET_CHAIN_ID,
  name: 'Solana',
  environment: 'live',
  cluster: 'mainnet-beta',
  walletChain: 'solana:mainnet',
  genesisHash: '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d',
  nativeCurrency: SOL,
  explorer: { name: 'Solana Explorer', txUrl: 'https://explorer.solana.com/tx/{hash}' },
  commitment: { seen: 'confirmed', final: 'finalized' },
  commitmentSource: COMMITMENT_SOURCE,
  slotTimeMs: 400,
  assets: [
    { symbol: 'SOL', name: 'Solana', currency: 'sol', address: 'native', decimals: 9 },
    // Circle, "USDC Contract Addresses" (developers.circle.com/stablecoins/usdc-contract-addresses): Solana.
    {
      symbol: 'USDC',
      name: 'USD Coin',
      currency: 'usdc',
      address: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v' as Address,
      decimals: 6,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    },
    // Tether, "Supported protocols" (tether.to/en/supported-protocols): Solana SPL token.
    {
      symbol: 'USDT',
      name: 'Tether USD',
      currency: 'usdt',
      address: 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB' as Address,
      decimals: 6,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    },
  ],
});

/**
 * Solana devnet. Assets: SOL and Circle's devnet USDC only. Tether issues no USDT on devnet
 * (the devnet "USDT" mints in circulation are third-party mocks with their own mint authority),
 * so none is listed, as on the EVM testnets.
 */
export const solanaDevnet = defineSolanaNetwork({
  network: 'solana-devnet',
  chainId: SOLANA_DEVNET_CHAIN_ID,
  name: 'Solana Devnet',
  environment: 'test',
  cluster: 'devnet',
  walletChain: 'solana:devnet',
  genesisHash: 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG',
  nativeCurrency: SOL,
  explorer: { name: 'Solana Explorer', txUrl: 'https://explorer.solana.com/tx/{hash}?cluster=devnet' },
  commitment: { seen: 'confirmed', final: 'finalized' },
  commitmentSource: COMMITMENT_SOURCE,
  slotTimeMs: 400,
  assets: [
    { symbol: 'SOL', name: 'Devnet SOL', currency: 'sol', address: 'native', decimals: 9 },
    // Circle, "USDC Contract Addresses", Testnet: Solana Devnet (faucet.circle.com).
    {
      symbol: 'USDC',
      name: 'USD Coin',
      currency: 'usdc',
      address: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU' as Address,
      decimals: 6,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    },
  ],
});

/** Every public Solana cluster Weir knows. The local one is built at runtime (`solanaLocalNetwork`). */
export const SOLANA_NETWORKS: readonly SolanaNetwork[] = Object.freeze([solanaMainnet, solanaDevnet]);

/** Chain ids a Solana RPC configuration may name: the public clusters plus the local one. */
export const KNOWN_SOLANA_CHAIN_IDS: readonly number[] = Object.freeze([
  ...SOLANA_NETWORKS.map((n) => n.chainId),
  SOLANA_LOCALNET_CHAIN_ID,
]);

/** Test mints of the local cluster; known only once it is running. */
export type SolanaLocalMints = { usdc: string; usdt: string };

/**
 * The local cluster (Weir's JSON-RPC server over litesvm, `devnet/`): SOL plus test USDC and USDT
 * (6 decimals, SPL Token) at the mints it created. It moves commitment only when told to, so the
 * same levels as the public clusters apply.
 */
export function solanaLocalNetwork(mints: SolanaLocalMints, options: { rpcUrl?: string } = {}): SolanaNetwork {
  const mint = (key: keyof SolanaLocalMints): Address => {
    const value: unknown = mints[key];
    if (typeof value !== 'string' || !isAddress(value))
      throw new NetworkDefinitionError(
        `network "solana-localnet": mints.${key} must be a base58 address of 32 bytes, got ${JSON.stringify(value)}`,
      );
    return value;
  };
  const custom = options.rpcUrl === undefined ? '' : `&customUrl=${encodeURIComponent(options.rpcUrl)}`;
  return defineSolanaNetwork({
    network: 'solana-localnet',
    chainId: SOLANA_LOCALNET_CHAIN_ID,
    name: 'Local Solana',
    environment: 'test',
    cluster: 'localnet',
    walletChain: 'solana:localnet',
    nativeCurrency: SOL,
    explorer: { name: 'Solana Explorer', txUrl: `https://explorer.solana.com/tx/{hash}?cluster=custom${custom}` },
    commitment: { seen: 'confirmed', final: 'finalized' },
    commitmentSource: 'local cluster: commitment moves when the test or `weir devnet` says so',
    slotTimeMs: 400,
    assets: [
      { symbol: 'SOL', name: 'Local SOL', currency: 'sol', address: 'native', decimals: 9 },
      {
        symbol: 'USDC',
        name: 'Test USD Coin',
        currency: 'usdc',
        address: mint('usdc'),
        decimals: 6,
        tokenProgram: TOKEN_PROGRAM_ADDRESS,
      },
      {
        symbol: 'USDT',
        name: 'Test Tether USD',
        currency: 'usdt',
        address: mint('usdt'),
        decimals: 6,
        tokenProgram: TOKEN_PROGRAM_ADDRESS,
      },
    ],
  });
}
