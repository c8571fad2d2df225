import type { Address } from '@solana/kit';
import type { PaymentRequest, PaymentRequestInput } from '../rail.ts';
import { transferRequestUrl } from './pay-url.ts';

/**
 * A Solana Pay transfer request for a session's Solana address: to the merchant's wallet (the
 * session's "payment address" is its reference, which only identifies the payment), in the mint
 * (none for SOL), with the reference, the organization as label and the items as message.
 */
export function solanaPaymentRequest({ address, amountDue, words }: PaymentRequestInput): PaymentRequest {
  const { asset } = address;
  const uri = transferRequestUrl({
    recipient: address.merchantAddress as Address,
    amount: amountDue,
    decimals: asset.decimals,
    ...(asset.address === 'native' ? {} : { splToken: asset.address as Address }),
    references: [address.paymentAddress as Address],
    ...(words.label ? { label: words.label } : {}),
    ...(words.message ? { message: words.message } : {}),
  });
  return { uri, payee: address.merchantAddress };
}
