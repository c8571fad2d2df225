import { paymentFixture } from '../../machines/checkout-session.fixture.ts';
import type { CheckoutSession, SessionPayment } from '../../machines/checkout-session.types.ts';
import { createTestRail } from '../chain-ingest/test-rail.ts';
import type { PayAt } from './checkout-status.ts';

/** What the payer-status and checkout-page tests share: the test rail's requests, names, a clock. */
const rail = createTestRail();
export const pay: PayAt = (address, amountDue) => rail.paymentRequest({ address, amountDue, words: {} });
export const names = (network: string) => (network === 'weir-testnet' ? 'Weir Testnet' : network);
export const NOW = Date.parse('2026-01-01T00:30:00.000Z');

/** The session with its first address (USDC on the test network) chosen as the payment method. */
export const withUsdcChosen = (session: CheckoutSession): CheckoutSession => ({
  ...session,
  paymentIntent: {
    ...session.paymentIntent,
    paymentMethod: {
      id: 'addr-usdc',
      type: 'wallet',
      accountAddress: session.addresses[0]!.paymentAddress,
      asset: session.addresses[0]!.asset,
      amountDue: '3000000',
      options: { wallet: { assetId: 'weir-testnet:usdc', transactionHash: null, contractAddress: '0xa11ce' } },
    },
  },
});

/** A payment of `amount` seen at 00:10, confirmed at 00:11 when `status` says so. */
export const payment = (amount: string, status: SessionPayment['status']): SessionPayment => ({
  ...paymentFixture(`t${amount}${status}`, amount),
  status,
  detectedAt: '2026-01-01T00:10:00.000Z',
  confirmedAt: status === 'confirmed' ? '2026-01-01T00:11:00.000Z' : null,
  late: false,
});

/**
 * `payment`, but in an 18-decimal token of the currency (as USDC is on BNB Chain), which can carry
 * any 10^8 amount: the session's 6-decimal USDC cannot have sent 1.00000001.
 */
export const fineGrainedPayment = (amount: string, status: SessionPayment['status']): SessionPayment => {
  const paid = payment(amount, status);
  return { ...paid, asset: { ...paid.asset, decimals: 18 }, amountRaw: (BigInt(amount) * 10n ** 10n).toString() };
};
