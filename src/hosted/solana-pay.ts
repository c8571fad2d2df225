import type { Address } from '@solana/kit';
import type { SessionAddress } from '../../machines/checkout-session.types.ts';
import { KNOWN_SOLANA_CHAIN_IDS } from '../chain-ingest/solana/networks.ts';
import { transferRequestUrl } from '../chain-ingest/solana/pay-url.ts';

/** Whether the address is on a Solana network: its payment address is a Solana Pay reference, not where money goes. */
export const isSolanaAddress = (address: Pick<SessionAddress, 'asset'>): boolean =>
  KNOWN_SOLANA_CHAIN_IDS.includes(address.asset.chainId);

/**
 * The Solana Pay transfer request of a session's Solana address for `amountDue` (base units):
 * to the merchant's wallet, in the mint (none for SOL), with the session's reference.
 */
export function solanaPaymentUri(address: SessionAddress, amountDue: string, label?: string): string {
  const { asset } = address;
  return transferRequestUrl({
    recipient: address.merchantAddress as Address,
    amount: BigInt(amountDue),
    decimals: asset.decimals,
    ...(asset.address === 'native' ? {} : { splToken: asset.address as Address }),
    references: [address.paymentAddress as Address],
    ...(label ? { label } : {}),
  });
}

/** Where the payer's money goes: the merchant's wallet on Solana (the reference only identifies), else the deposit address. */
export const payeeAddress = (address: SessionAddress): string =>
  isSolanaAddress(address) ? address.merchantAddress : address.paymentAddress;
