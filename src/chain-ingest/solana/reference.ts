import { createHash } from 'node:crypto';
import { getAddressDecoder, type Address } from '@solana/kit';

/**
 * A session's Solana Pay reference on `network`: 32 bytes derived from (network, organization,
 * session), read as a public key. Nobody holds a private key for it (none is needed: a reference
 * is only a read-only account the transfer names, which `getSignaturesForAddress` indexes), and
 * it is known at creation and rebuilt the same way without storing anything.
 */
export function solanaReference(input: {
  network: string;
  organizationId: string;
  checkoutSessionId: string;
}): Address {
  const digest = createHash('sha256')
    .update(`weir/solana-pay-reference/v1\0${input.network}\0${input.organizationId}\0${input.checkoutSessionId}`)
    .digest();
  return getAddressDecoder().decode(digest);
}
