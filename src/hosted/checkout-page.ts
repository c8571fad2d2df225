import type { CheckoutSession } from '../../machines/checkout-session.types.ts';
import type { Organization } from '../actors/organization.ts';
import { formatAmount } from '../shared/money.ts';
import { brandColorOf, escapeHtml, hostedPage, scriptJson } from './html.ts';

/** Where the payer goes after completion: the success URL with the session id filled in. */
export const successRedirect = (session: CheckoutSession): string =>
  session.successUrl.replace(/\{CHECKOUT_SESSION_ID\}/g, session.id);

/**
 * The hosted checkout page: server-rendered, with a small script that reveals the deposit
 * address and QR code for the chosen asset and follows the session's status without a reload.
 */
export function renderCheckoutPage(session: CheckoutSession, org: Organization | null): string {
  const brand = brandColorOf(org);
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
    org,
    business,
    style: `  ul { list-style: none; padding: 0; } li { display: flex; justify-content: space-between; padding: .3rem 0; }
  .total { font-size: 1.6rem; font-weight: 600; }
  .asset { margin: .2rem; padding: .5rem .8rem; border: 1px solid ${brand}; background: #fff; border-radius: .4rem; cursor: pointer; }
  .asset[aria-pressed="true"] { background: ${brand}; color: #fff; }
  #reveal { margin-top: 1rem; word-break: break-all; } #qr svg { width: 12rem; height: 12rem; }
  #status { margin-top: 1rem; font-weight: 600; }`,
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
  </div>
  <p id="status" data-status="${escapeHtml(session.status)}">Status: ${escapeHtml(session.status)}</p>
  <p id="received" class="muted"></p>
  ${session.cancelUrl ? '<p><button type="button" id="cancel" class="asset">Cancel</button></p>' : ''}`,
    script: `<script>
const SESSION = ${scriptJson({ id: session.id })};
const base = '/checkout/' + SESSION.id;
const statusEl = document.getElementById('status');
async function choose(button) {
  document.querySelectorAll('.asset[data-asset]').forEach((b) => b.setAttribute('aria-pressed', String(b === button)));
  const res = await fetch(base + '/payment-method', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ assetId: button.dataset.asset }) });
  const body = await res.json();
  if (!res.ok) { statusEl.textContent = body.message; return; }
  document.getElementById('due').textContent = body.amountDue;
  document.getElementById('symbol').textContent = body.symbol;
  document.getElementById('network').textContent = body.network;
  document.getElementById('address').textContent = body.address;
  document.getElementById('qr').innerHTML = body.qrSvg;
  document.getElementById('reveal').hidden = false;
}
document.querySelectorAll('.asset[data-asset]').forEach((b) => b.addEventListener('click', () => choose(b)));
const promo = document.getElementById('promo');
if (promo) promo.addEventListener('submit', async (e) => {
  e.preventDefault();
  const res = await fetch(base + '/promotion-code', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code: new FormData(promo).get('code') }) });
  const body = await res.json();
  document.getElementById('promo-result').textContent = res.ok ? 'Applied' : body.message;
  if (res.ok) {
    document.getElementById('amount').textContent = (Number(body.amountTotal) / 1e8).toString();
    const chosen = document.querySelector('.asset[aria-pressed="true"]');
    if (chosen) choose(chosen);
  }
});
const cancel = document.getElementById('cancel');
if (cancel) cancel.addEventListener('click', async () => {
  const res = await fetch(base + '/cancel', { method: 'POST' });
  const body = await res.json();
  if (body.redirectUrl) location.assign(body.redirectUrl); else statusEl.textContent = body.message;
});
async function poll() {
  try {
    const res = await fetch(base + '/status', { cache: 'no-store' });
    const s = await res.json();
    statusEl.dataset.status = s.status;
    statusEl.textContent = 'Status: ' + s.status + (s.paymentStatus === 'paid' ? ' (paid)' : '');
    document.getElementById('received').textContent = s.amountReceived !== '0' ? 'Received ' + s.amountReceivedFormatted + ' ' + s.currency : '';
    if (s.status === 'complete' && s.message) document.getElementById('received').textContent = s.message;
    if (s.status === 'complete' && s.redirectUrl) { location.assign(s.redirectUrl); return; }
    if (s.status === 'expired' || s.status === 'canceled') return;
  } catch (e) { /* keep polling through network blips */ }
  setTimeout(poll, 1000);
}
poll();
</script>`,
  });
}
