import type { SessionAddress } from '../../machines/checkout-session.types.ts';
import { KNOWN_SOLANA_CHAIN_IDS } from '../chain-ingest/solana/networks.ts';

/** Whether the address is on a Solana network: its payment address is a Solana Pay reference, not where money goes. */
export const isSolanaAddress = (address: Pick<SessionAddress, 'asset'>): boolean =>
  KNOWN_SOLANA_CHAIN_IDS.includes(address.asset.chainId);
