import { shownAddress } from '../../shared/evm-address.ts';
import type { PaymentRequest, PaymentRequestInput } from '../rail.ts';

/**
 * An EVM payment request (EIP-681): the native coin as `value` to the deposit address, a token as
 * its `transfer(address, uint256)`. EIP-681 has no label or message, so the words are not carried.
 * Addresses in their EIP-55 checksum, as the API answers them (EIP-681 takes either case, and a
 * wallet that checks the checksum catches a mistyped one): the log keeps whatever case it was given.
 */
export function evmPaymentRequest({ address, amountDue }: PaymentRequestInput): PaymentRequest {
  const { asset } = address;
  const payee = shownAddress(address.paymentAddress);
  const uri =
    asset.address === 'native'
      ? `ethereum:${payee}@${asset.chainId}?value=${amountDue}`
      : `ethereum:${shownAddress(asset.address)}@${asset.chainId}/transfer?address=${payee}&uint256=${amountDue}`;
  return { uri, payee };
}
