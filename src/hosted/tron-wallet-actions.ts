import type { CheckoutSession } from '../../machines/checkout-session.types.ts';
import { assetUrl } from './assets.ts';
import { escapeHtml } from './html.ts';
import { payable, type WalletContext } from './wallet-actions.ts';

/**
 * "Pay with TronLink" on the hosted checkout page, when the session takes a Tron asset and is
 * still open: assets/tron-wallet.js asks the injected provider (TIP-1193 `window.tron`, or
 * `window.tronLink`) for the account, builds the TRC-20 `transfer` or the TRX transfer of what is
 * left to pay with its `tronWeb`, and has it signed and broadcast. Addresses are in Tron's `T…` form
 * throughout; nothing when no Tron asset is offered.
 */
export function renderTronWalletActions(session: CheckoutSession, context: WalletContext | null): string {
  if (!context || !payable(session)) return '';
  const tronChains = new Set(context.networks.filter((n) => n.kind === 'tron').map((n) => n.chainId));
  const targets = session.addresses
    .filter((a) => tronChains.has(a.asset.chainId))
    .map((a) => {
      const token = a.asset.address === 'native' ? '' : a.asset.address;
      return `<span data-address="${escapeHtml(a.id)}" data-token="${escapeHtml(token)}" data-to="${escapeHtml(a.paymentAddress)}" data-symbol="${escapeHtml(a.asset.symbol)}"></span>`;
    })
    .join('');
  if (!targets) return '';
  return `<div id="tron-wallet-actions" class="wallet-actions" data-session="${escapeHtml(session.id)}">
    <link rel="stylesheet" href="${assetUrl('wallet.css')}">
    <div class="wallet-buttons">
      <button type="button" class="wallet-button" data-tron-action="pay">Pay with TronLink</button>
    </div>
    <p class="wallet-message tron-wallet-message" role="status" aria-live="polite"></p>
    <div class="tron-targets" hidden>${targets}</div>
    <script src="${assetUrl('tron-wallet.js')}" defer></script>
  </div>`;
}
