import type { CheckoutSession, SessionAddress } from '../../machines/checkout-session.types.ts';
import { assetUrl } from './assets.ts';
import { escapeHtml } from './html.ts';
import { payable, type WalletContext } from './wallet-actions.ts';

/** Whether the test wallet can pay `address`: a test session, on the local Tron Weir runs. */
export const tronTestWalletPays = (
  session: CheckoutSession,
  address: SessionAddress,
  context: WalletContext,
): boolean =>
  session.environment === 'test' && !!context.tronDevnet && address.asset.chainId === context.tronDevnet.chainId;

/**
 * "Pay with TronLink" on the hosted checkout page, when the session takes a Tron asset and is
 * still open: assets/tron-wallet.js asks the injected provider (TIP-1193 `window.tron`, or
 * `window.tronLink`) for the account, builds the TRC-20 `transfer` or the TRX transfer of what is
 * left to pay with its `tronWeb`, and has it signed and broadcast. Addresses are in Tron's `T…` form
 * throughout; nothing when no Tron asset is offered. On a test session with the local Tron, also
 * "Pay with test wallet" (shown while a local-Tron asset is chosen): Weir pays from a funded account.
 * The script is deferred: it reads answers through hosted-fetch.js, which the checkout page loads before checkout.js.
 */
export function renderTronWalletActions(session: CheckoutSession, context: WalletContext | null): string {
  if (!context || !payable(session)) return '';
  const tronChains = new Set(context.networks.filter((n) => n.kind === 'tron').map((n) => n.chainId));
  const targets = session.addresses
    .filter((a) => tronChains.has(a.asset.chainId))
    .map((a) => {
      const token = a.asset.address === 'native' ? '' : a.asset.address;
      const test = String(tronTestWalletPays(session, a, context));
      return `<span data-address="${escapeHtml(a.id)}" data-token="${escapeHtml(token)}" data-to="${escapeHtml(a.paymentAddress)}" data-symbol="${escapeHtml(a.asset.symbol)}" data-test-wallet="${test}"></span>`;
    })
    .join('');
  if (!targets) return '';
  const testWallet = session.addresses.some((a) => tronTestWalletPays(session, a, context));
  return `<div id="tron-wallet-actions" class="wallet-actions" data-session="${escapeHtml(session.id)}">
    <link rel="stylesheet" href="${assetUrl('wallet.css')}">
    <div class="wallet-buttons">
      <button type="button" class="wallet-button" data-tron-action="pay">Pay with TronLink</button>
      ${testWallet ? '<button type="button" class="wallet-button" data-tron-action="test" hidden>Pay with test wallet</button>' : ''}
    </div>
    <p class="wallet-message tron-wallet-message" role="status" aria-live="polite"></p>
    <div class="tron-targets" hidden>${targets}</div>
    <script src="${assetUrl('tron-wallet.js')}" defer></script>
  </div>`;
}
