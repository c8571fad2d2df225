import { createHash, randomBytes } from 'node:crypto';
import { getAddressDecoder, isAddress, type Address } from '@solana/kit';
import { formatAmount } from '../../shared/money.ts';

/** A Solana Pay transfer request (Solana Pay spec, "Transfer Request"). */
export type TransferRequest = {
  /** The merchant's wallet (never its token account: the wallet derives that from `splToken`). */
  recipient: Address;
  /** In base units (lamports, or the mint's smallest unit); omitted lets the payer choose. */
  amount?: bigint;
  /** The decimals `amount` is counted in: 9 for SOL, the mint's for a token. */
  decimals: number;
  /** The mint for an SPL token payment; omitted for SOL. */
  splToken?: Address;
  /** Keys the wallet adds, in this order, as read-only accounts of the transfer instruction. */
  references: readonly Address[];
  /** Who is asking (the merchant's name), shown by the wallet. */
  label?: string;
  /** What for (the order), shown by the wallet. */
  message?: string;
};

/** A transfer request cannot be encoded; the message names the field. */
export class TransferRequestError extends Error {
  override name = 'TransferRequestError';
}

/**
 * The `solana:` URL of a transfer request:
 * `solana:<recipient>?amount=<decimal>&spl-token=<mint>&reference=<key>&label=…&message=…`.
 * The amount is written exactly from base units (`1500000` at 6 decimals is `1.5`), never
 * through a float; label and message are percent-encoded (UTF-8, spaces as %20).
 */
export function transferRequestUrl(request: TransferRequest): string {
  const fail = (field: string, message: string): never => {
    throw new TransferRequestError(`${field}: ${message}`);
  };
  if (!isAddress(request.recipient)) fail('recipient', 'must be a base58 Solana address of 32 bytes');
  if (!Number.isInteger(request.decimals) || request.decimals < 0 || request.decimals > 36)
    fail('decimals', `must be an integer from 0 to 36, got ${request.decimals}`);
  const params: [string, string][] = [];
  if (request.amount !== undefined) {
    if (request.amount <= 0n) fail('amount', `must be positive, got ${request.amount}`);
    params.push(['amount', formatAmount(request.amount, request.decimals)]);
  }
  if (request.splToken !== undefined) {
    if (!isAddress(request.splToken)) fail('splToken', 'must be a base58 Solana address of 32 bytes');
    params.push(['spl-token', request.splToken]);
  }
  request.references.forEach((reference, index) => {
    if (!isAddress(reference)) fail(`references[${index}]`, 'must be a base58 Solana address of 32 bytes');
    params.push(['reference', reference]);
  });
  if (request.label !== undefined && request.label !== '') params.push(['label', request.label]);
  if (request.message !== undefined && request.message !== '') params.push(['message', request.message]);
  const query = params.map(([key, value]) => `${key}=${encodeURIComponent(value)}`).join('&');
  return `solana:${request.recipient}${query === '' ? '' : `?${query}`}`;
}

/**
 * A fresh reference key: 32 random bytes read as an address. No key pair is ever made, so there
 * is no private key to keep or lose; a reference only has to be unique, and nodes index
 * `getSignaturesForAddress` for every account key of a transaction, on the curve or off it.
 */
export function newReference(): Address {
  return getAddressDecoder().decode(randomBytes(32));
}

/**
 * The reference of one session's payment request, derived from the same inputs as an EVM
 * deposit address (`Rail.depositAddress`), so it is known at creation and rebuilt without a
 * lookup: SHA-256 over a domain tag and the length-prefixed inputs, read as an address. It is as unpredictable
 * as the session id and, like a random one, has no private key.
 */
export function sessionReference(input: {
  network: string;
  organizationId: string;
  checkoutSessionId: string;
  merchantAddress: string;
}): Address {
  const hash = createHash('sha256').update('weir/solana-pay-reference/v1');
  for (const part of [input.network, input.organizationId, input.checkoutSessionId, input.merchantAddress])
    hash.update(`${Buffer.byteLength(part)}:${part}`);
  return getAddressDecoder().decode(hash.digest());
}
