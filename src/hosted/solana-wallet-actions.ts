import type { CheckoutSession } from '../../machines/checkout-session.types.ts';
import { assetUrl } from './assets.ts';
import { escapeHtml } from './html.ts';
import { isSolanaAddress } from './solana-pay.ts';

/**
 * "Pay with a Solana wallet" on the hosted checkout page, when the session takes a Solana asset
 * and is still open: assets/solana-wallet.js finds the browser's Solana wallets through the Wallet
 * Standard, asks Weir for the transfer of the chosen Solana asset (`POST /checkout/{id}/solana-transaction`)
 * and has the wallet sign and send it. Nothing when no Solana asset is offered. The script is deferred:
 * it reads answers through hosted-fetch.js, which the checkout page loads before checkout.js.
 */
export function renderSolanaWalletActions(session: CheckoutSession): string {
  if (session.status !== 'open' && session.status !== 'incomplete') return '';
  const solana = session.addresses.filter(isSolanaAddress);
  if (solana.length === 0) return '';
  const assets = solana.map((a) => `${a.id} ${a.asset.id}`).join(' ');
  return `<div id="solana-wallet-actions" class="wallet-actions" data-session="${escapeHtml(session.id)}" data-assets="${escapeHtml(assets)}">
    <link rel="stylesheet" href="${assetUrl('wallet.css')}">
    <div class="wallet-buttons">
      <button type="button" class="wallet-button" data-solana-action="pay">Pay with a Solana wallet</button>
    </div>
    <p class="wallet-message solana-wallet-message" role="status" aria-live="polite"></p>
    <script src="${assetUrl('solana-wallet.js')}" defer></script>
  </div>`;
}
