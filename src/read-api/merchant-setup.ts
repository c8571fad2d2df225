import { NO_PAYMENT_METHOD } from '../actors/invoice-payability.ts';
import { WALLET_INVALID } from '../actors/session-networks.ts';
import { WeirError } from '../shared/errors.ts';

/**
 * Session refusals that come from the merchant's setup (no payment method for the currency, a wallet
 * that is broken), not the payer. A hosted page tells its payer it cannot be paid right now, never the
 * refusal itself: that names the merchant's wallets and the API routes that correct them.
 */
export const MERCHANT_SETUP_CODES: ReadonlySet<string> = new Set([NO_PAYMENT_METHOD, WALLET_INVALID]);

/** Whether `error` is such a refusal. */
export const isMerchantSetupRefusal = (error: unknown): error is WeirError =>
  error instanceof WeirError && MERCHANT_SETUP_CODES.has(error.code);
