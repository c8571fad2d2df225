import type { PaymentRequest, PaymentRequestInput } from '../rail.ts';

/** `amount` chain units as a decimal string with `decimals` places, trailing zeros dropped. */
function decimalOf(amount: bigint, decimals: number): string {
  const scale = 10n ** BigInt(decimals);
  const fraction = (amount % scale).toString().padStart(decimals, '0').replace(/0+$/, '');
  return fraction === '' ? (amount / scale).toString() : `${amount / scale}.${fraction}`;
}

/**
 * A Tron payment request. Tron has no URI standard like EIP-681 (TronLink and most wallets scan a
 * bare T… address), so the URI is `tron:<deposit address>?amount=<decimal>` with `&token=<contract>`
 * for a TRC-20: a wallet that knows no more still finds the address after `tron:`. The amount is in
 * the asset's whole units (TRX, USDT), as Tron wallets show them.
 */
export function tronPaymentRequest({ address, amountDue }: PaymentRequestInput): PaymentRequest {
  const { asset, paymentAddress } = address;
  const amount = decimalOf(amountDue, asset.decimals);
  const uri =
    asset.address === 'native'
      ? `tron:${paymentAddress}?amount=${amount}`
      : `tron:${paymentAddress}?amount=${amount}&token=${asset.address}`;
  return { uri, payee: paymentAddress };
}
