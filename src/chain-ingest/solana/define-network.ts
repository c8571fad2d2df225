import { isAddress, type Address } from '@solana/kit';
import type { AssetRef } from '../../../machines/checkout-session.types.ts';
import type { Environment } from '../../event-store/event-store.ts';
import {
  assetIdOf,
  assetRefOf,
  checkAssets,
  frozenNetwork,
  railNetworkOf,
  checkNetworkBase,
  failFor,
  NATIVE_ASSET_ADDRESS,
  type Fail,
} from '../network-definition.ts';
import type { RailNetwork } from '../rail.ts';

/** The SPL Token program, which holds USDC and USDT on every cluster. */
export const TOKEN_PROGRAM_ADDRESS = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA' as Address;
/** The Token-2022 program (Token Extensions), which holds PYUSD and other newer mints. */
export const TOKEN_2022_PROGRAM_ADDRESS = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb' as Address;
/** The System program: native SOL transfers. */
export const SYSTEM_PROGRAM_ADDRESS = '11111111111111111111111111111111' as Address;

/** Solana's commitment levels, weakest first (Solana RPC docs, "Configuring State Commitment"). */
export type Commitment = 'processed' | 'confirmed' | 'finalized';

/** One asset a Solana network takes payments in: SOL itself or an SPL mint. */
export type SolanaAssetDefinition = {
  readonly symbol: string;
  readonly name: string;
  /** Lowercase currency code (`usdc`, `usdt`, `sol`). */
  readonly currency: string;
  /** The mint address (base58), or `native` for SOL. */
  readonly address: Address | typeof NATIVE_ASSET_ADDRESS;
  readonly decimals: number;
  /** The program that owns the mint, which the merchant's associated token account is derived with. */
  readonly tokenProgram?: Address;
  readonly key?: string;
};

/** A Solana network as written in `networks.ts`. */
export type SolanaNetworkDefinition = {
  /** Bus name: the `<network>` of `chain.<network>.*`. */
  readonly network: string;
  /**
   * Weir's numeric id for the cluster (Solana itself has none; see `networks.ts` for where these
   * numbers come from). It keys RPC endpoints (`WEIR_RPC_<chainId>`) and the API's `chainId`.
   */
  readonly chainId: number;
  readonly name: string;
  readonly environment: Environment;
  /** The cluster as Solana names it (`mainnet-beta`, `devnet`, `localnet`). */
  readonly cluster: 'mainnet-beta' | 'devnet' | 'localnet';
  /** The Wallet Standard chain id wallets are asked to sign for (`solana:mainnet`, ...). */
  readonly walletChain: `solana:${string}`;
  /** The cluster's genesis hash (its CAIP-2 reference), when it has a fixed one. */
  readonly genesisHash?: string;
  readonly nativeCurrency: { readonly name: string; readonly symbol: string; readonly decimals: number };
  /** `txUrl` holds `{hash}` where the transaction signature goes. */
  readonly explorer: { readonly name: string; readonly txUrl: string };
  /**
   * The commitment at which a payment is seen (the session shows it confirming) and the one at
   * which it is final; a transaction seen but never final is withdrawn like an EVM reorg.
   */
  readonly commitment: { readonly seen: Commitment; readonly final: Commitment };
  /** Where the commitment levels come from and why they were chosen. */
  readonly commitmentSource: string;
  /** Approximate slot time, for polling intervals and ETA estimates. */
  readonly slotTimeMs: number;
  readonly assets: readonly SolanaAssetDefinition[];
};

/** A checked, deeply frozen Solana network, as returned by `defineSolanaNetwork`. */
export type SolanaNetwork = SolanaNetworkDefinition & { readonly kind: 'solana' };

const COMMITMENT_ORDER: readonly Commitment[] = ['processed', 'confirmed', 'finalized'];

/** Whether a transaction at `status` (a node's `confirmationStatus`) has reached `level`. */
export const commitmentReached = (status: string | null | undefined, level: Commitment): boolean =>
  COMMITMENT_ORDER.indexOf(status as Commitment) >= COMMITMENT_ORDER.indexOf(level);

/**
 * Checks and freezes a Solana network definition, like `defineEvmNetwork`. Throws a
 * `NetworkDefinitionError` for a bad bus name, chain id, explorer URL, commitment, mint address
 * (base58 of 32 bytes), token program, decimals or a duplicate asset.
 */
export function defineSolanaNetwork<const T extends SolanaNetworkDefinition>(
  definition: T,
): T & { readonly kind: 'solana' } {
  const fail = failFor(definition.network);
  checkNetworkBase(definition, fail);
  const { seen, final } = definition.commitment;
  if (!COMMITMENT_ORDER.includes(seen) || !COMMITMENT_ORDER.includes(final))
    fail(`commitment levels must be ${COMMITMENT_ORDER.join(', ')}; got seen ${seen}, final ${final}`);
  if (COMMITMENT_ORDER.indexOf(final) < COMMITMENT_ORDER.indexOf(seen))
    fail(`commitment.final (${final}) must be at least as strong as commitment.seen (${seen})`);
  if (definition.commitmentSource.trim() === '')
    fail('commitmentSource must say where the commitment levels come from');
  if (!Number.isFinite(definition.slotTimeMs) || definition.slotTimeMs <= 0)
    fail(`slotTimeMs must be a positive number, got ${definition.slotTimeMs}`);
  checkAssets(definition, (asset, label) => checkMint(asset, label, fail), fail);

  return Object.freeze({
    ...frozenNetwork(definition, 'solana'),
    commitment: Object.freeze({ ...definition.commitment }),
  });
}

function checkMint(asset: SolanaAssetDefinition, label: string, fail: Fail): void {
  if (!isAddress(asset.address)) fail(`${label}: ${JSON.stringify(asset.address)} is not a base58 address of 32 bytes`);
  const program = asset.tokenProgram;
  if (program !== TOKEN_PROGRAM_ADDRESS && program !== TOKEN_2022_PROGRAM_ADDRESS)
    fail(`${label}: tokenProgram must be the Token or Token-2022 program, got ${JSON.stringify(program)}`);
}

/** The asset id (`<network>:<key>`). */
export const solanaAssetId: (
  network: Pick<SolanaNetworkDefinition, 'network'>,
  asset: SolanaAssetDefinition,
) => string = assetIdOf;

/** The asset as the rest of Weir sees it. */
export const toSolanaAssetRef: (
  network: Pick<SolanaNetworkDefinition, 'network' | 'chainId'>,
  asset: SolanaAssetDefinition,
) => AssetRef = assetRefOf;

/** The network as a rail offers it (`Rail.networks`). */
export const toSolanaRailNetwork = (network: SolanaNetworkDefinition): RailNetwork => railNetworkOf(network, 'solana');
