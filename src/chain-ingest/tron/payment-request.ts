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
 * for a TRC-20 (the wallet link; the QR code holds the bare address, see scannableOf). The amount is
 * in the asset's whole units (TRX, USDT), as Tron wallets show them.
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

/**
 * What a payment request's QR code holds: for a `tron:` request its bare T… address, since Tron
 * wallets and exchange apps scan an address and refuse the URI (the amount is shown beside the
 * code); any other request as it is.
 */
export const scannableOf = (uri: string): string => (uri.startsWith('tron:') ? uri.slice(5).split('?')[0]! : uri);
