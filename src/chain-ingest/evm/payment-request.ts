import type { PaymentRequest, PaymentRequestInput } from '../rail.ts';

/**
 * An EVM payment request (EIP-681): the native coin as `value` to the deposit address, a token as
 * its `transfer(address, uint256)`. EIP-681 has no label or message, so the words are not carried.
 */
export function evmPaymentRequest({ address, amountDue }: PaymentRequestInput): PaymentRequest {
  const { asset, paymentAddress } = address;
  const uri =
    asset.address === 'native'
      ? `ethereum:${paymentAddress}@${asset.chainId}?value=${amountDue}`
      : `ethereum:${asset.address}@${asset.chainId}/transfer?address=${paymentAddress}&uint256=${amountDue}`;
  return { uri, payee: paymentAddress };
}
