import type { CheckoutSession } from '../../machines/checkout-session.types.ts';
import type { Organization } from '../actors/organization.ts';
import { formatAmount } from '../shared/money.ts';
import { escapeHtml, hostedPage } from './html.ts';
import { renderWalletActions, type WalletContext } from './wallet-actions.ts';

/** Where the payer goes after completion: the success URL with the session id filled in. */
export const successRedirect = (session: CheckoutSession): string =>
  session.successUrl.replace(/\{CHECKOUT_SESSION_ID\}/g, session.id);

/**
 * The hosted checkout page: server-rendered, with a small script (assets/checkout.js) that reveals
 * the deposit address and QR code for the chosen asset and follows the session's status without a
 * reload.
 */
export function renderCheckoutPage(
  session: CheckoutSession,
  org: Organization | null,
  wallet: WalletContext | null = null,
): string {
  const business = org?.name ?? 'Checkout';
  const currency = session.currency.toUpperCase();
  const items = session.lineItems.data
    .map(
      (item) => `
        <li><span>${escapeHtml(item.description ?? item.price.product.name)} × ${item.quantity}</span><span>${escapeHtml(formatAmount(BigInt(item.amountTotal)))} ${escapeHtml(currency)}</span></li>`,
    )
    .join('');
  const options = session.addresses
    .map(
      (a) => `
        <button type="button" class="asset" data-asset="${escapeHtml(a.id)}">${escapeHtml(a.asset.symbol)} <small>on ${escapeHtml(a.network)}</small></button>`,
    )
    .join('');
  return hostedPage({
    title: `Pay ${business}`,
    kind: 'checkout',
    org,
    business,
    main: `  <p class="total"><span id="amount">${escapeHtml(formatAmount(BigInt(session.amountTotal)))}</span> ${escapeHtml(currency)}</p>
  <ul>${items}
  </ul>
  <p class="muted">Choose how to pay:</p>
  <div id="assets">${options}
  </div>
  ${session.allowPromotionCodes ? `<form id="promo"><label>Promotion code <input name="code" autocomplete="off" maxlength="100"></label> <button type="submit" class="asset">Apply</button> <span id="promo-result" class="muted"></span></form>` : ''}
  <div id="reveal" hidden>
    <p>Send exactly <strong id="due"></strong> <span id="symbol"></span> on <span id="network"></span> to</p>
    <p><code id="address"></code></p>
    <div id="qr"></div>
    ${renderWalletActions(session, wallet)}
  </div>
  <p id="status" data-status="${escapeHtml(session.status)}">Status: ${escapeHtml(session.status)}</p>
  <p id="received" class="muted"></p>
  ${session.cancelUrl ? '<p><button type="button" id="cancel" class="asset">Cancel</button></p>' : ''}`,
    script: { name: 'checkout.js', data: { session: session.id } },
  });
}
