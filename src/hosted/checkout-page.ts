import { needsCustomerEmail } from '../../machines/checkout-session.decide.ts';
import type { CheckoutSession, SessionAddress } from '../../machines/checkout-session.types.ts';
import { documentAmount } from '../shared/money.ts';
import { TRON_LOCAL_CHAIN_ID } from '../chain-ingest/tron/networks.ts';
import type { Organization } from '../actors/organization.ts';
import { sessionTotals, type TotalsRow } from './totals.ts';
import { businessFooter, contactLinks, supportUrlOf } from './business-footer.ts';
import { LIVE_CLAUSE, type NetworkNames, type PayerStatus } from './checkout-status.ts';
import { allSentBefore, paidAfterClose, paidAtClose } from '../../machines/checkout-session.late.ts';
import { escapeHtml as e, hostedPage } from './html.ts';
import { assetIconUrl, networkIconUrl } from './icons.ts';
import { renderWalletActions, type WalletContext } from './wallet-actions.ts';
import { renderSolanaWalletActions } from './solana-wallet-actions.ts';
import { isSolanaAddress } from './solana-pay.ts';
import { renderTronWalletActions } from './tron-wallet-actions.ts';
import { recurrence } from '../shared/recurrence.ts';
import { shownAddress } from '../shared/evm-address.ts';

export { successRedirect } from './checkout-status.ts';

/** What the page shows of a line item's product beyond its name (read from the catalog). */
export type ProductView = { description: string | null; images: string[] };

const FINAL = new Set(['complete', 'expired', 'canceled']);

/** Only http(s) images: anything else in product data is not shown. */
const imageUrl = (url: string | undefined): string | null => (url && /^https?:\/\//i.test(url) ? url : null);

function lineItems(session: CheckoutSession, products: ReadonlyMap<string, ProductView>, currency: string): string {
  return session.lineItems.data
    .map((item) => {
      const product = products.get(item.price.productId);
      const name = item.description ?? item.price.product.name;
      const description = product?.description ?? item.price.product.description;
      const image = imageUrl(product?.images[0]);
      const every = recurrence(item.price.interval, item.price.intervalCount);
      const unit = `${documentAmount(BigInt(item.price.unitAmount))} ${currency}`;
      // An invoice's session has one line, the invoice itself: "Invoice INV-000001 × 1" counts nothing.
      const count = session.invoiceId ? '' : ` × ${item.quantity}`;
      return `
      <li class="item">
        ${image ? `<img class="item-image" src="${e(image)}" alt="" width="56" height="56">` : ''}
        <div class="item-text">
          <span class="item-name">${e(name)}${count}</span>
          ${description ? `<span class="item-description">${e(description)}</span>` : ''}
          ${item.quantity > 1 ? `<span class="item-unit">${e(unit)} each</span>` : ''}
        </div>
        <span class="item-amount">${e(documentAmount(BigInt(item.amountSubtotal)))} ${e(currency)}${every ? ` <span class="recurrence">${e(every)}</span>` : ''}</span>
      </li>`;
    })
    .join('');
}

/**
 * How often the whole total recurs: the period every line shares when all of them are recurring
 * ("every month"); '' when any is one-time or the periods differ (each line says its own).
 */
function totalRecurrence(session: CheckoutSession): string {
  const periods = new Set(session.lineItems.data.map((i) => recurrence(i.price.interval, i.price.intervalCount)));
  const [only] = [...periods];
  return periods.size === 1 && only ? only : '';
}

/** The period after an amount, outside the figure checkout.js rewrites. */
const every = (period: string) => (period ? ` <span class="recurrence">${e(period)}</span>` : '');

const TOTALS_IDS: Partial<Record<TotalsRow['kind'], string>> = { subtotal: 'subtotal' };
const TOTALS_CLASSES: Partial<Record<TotalsRow['kind'], string>> = { tax: 'tax', 'included-tax': 'tax-included' };

function totals(session: CheckoutSession, status: PayerStatus): string {
  const c = status.currency;
  const row = (label: string, amount: string, id?: string, cls = '', hidden = false, period = '') =>
    `<div class="row${cls ? ` ${cls}` : ''}"${id ? ` id="${id}-row"` : ''}${hidden ? ' hidden' : ''}><dt>${label}</dt><dd><span${id ? ` id="${id}"` : ''}>${e(amount)}</span> ${e(c)}${every(period)}</dd></div>`;
  // The rows the receipt and the dashboard show too; one per tax rate: exclusive rates add to the
  // total, inclusive ones are only shown as contained.
  const rows = sessionTotals(session)
    .filter((r) => r.kind !== 'total')
    .map((r) =>
      r.kind === 'discount'
        ? row(e(r.label), `−${documentAmount(r.amount)}`)
        : row(e(r.label), documentAmount(r.amount), TOTALS_IDS[r.kind], TOTALS_CLASSES[r.kind]),
    );
  rows.push(row('Total due', status.amountTotalFormatted, 'total-due', 'strong', false, totalRecurrence(session)));
  rows.push(...paidRows(session, status, row));
  // Seen, not confirmed: shown apart, so Paid + Confirming + Remaining make the total due.
  rows.push(row('Confirming', status.amountPendingFormatted, 'confirming', '', status.amountPending === '0'));
  // Expired or canceled, nothing is left to pay: no "Remaining" beside "do not send a payment".
  const over = session.status === 'expired' || session.status === 'canceled';
  rows.push(row('Remaining', status.amountLeftFormatted, 'remaining', 'strong remaining', over));
  return `<dl class="totals" id="totals">${rows.join('')}</dl>`;
}

/**
 * What was paid: one row, or for a closed session that money reached after its close, what came
 * before the close (what counts toward the order) and the late money apart, so a payer never reads
 * late money as paying the order. Worded as the status tells it: sent before the close, "confirmed after".
 */
function paidRows(
  session: CheckoutSession,
  status: PayerStatus,
  row: (label: string, amount: string, id?: string) => string,
): string[] {
  // The amounts are the status's own, so the page and its poll never tell two splits.
  const { afterClose } = paidAtClose(session);
  if (!afterClose) return [row('Paid', status.amountReceivedBeforeCloseFormatted, 'paid')];
  const before = session.status === 'canceled' ? 'Paid before it was canceled' : 'Paid before it expired';
  const after = allSentBefore(afterClose) ? 'Confirmed after closing' : 'Received after closing';
  return [
    row(before, status.amountReceivedBeforeCloseFormatted, 'paid'),
    row(after, status.amountReceivedAfterCloseFormatted, 'paid-late'),
  ];
}

/** The wallets that pay an address: its network's kind (evm, solana, tron); '' when no wallet action serves it. */
function familyOf(address: SessionAddress, wallet: WalletContext | null): string {
  if (isSolanaAddress(address)) return 'solana';
  return wallet?.networks.find((n) => n.chainId === address.asset.chainId)?.kind ?? '';
}

/**
 * What a token payer must also hold: the network's fee is paid in its own coin (ETH, SOL, TRX), and
 * a wallet holding only the token cannot send it. On Tron a transfer without staked energy burns TRX;
 * the local Tron charges nothing (its anvil runs with zero fees), so its payer is told so.
 */
function feeHint(address: SessionAddress, wallet: WalletContext | null): string {
  const network = wallet?.networks.find((n) => n.chainId === address.asset.chainId);
  if (!network || address.asset.address === 'native') return '';
  const coin = network.nativeCurrency.symbol;
  const { symbol } = address.asset;
  if (network.chainId === TRON_LOCAL_CHAIN_ID)
    return `The local Tron charges no network fee: a wallet holding only ${symbol} can send it.`;
  return network.kind === 'tron'
    ? `The network fee is paid in ${coin}, not ${symbol}: sending ${symbol} on Tron can burn several ${coin}, so keep some in the sending wallet.`
    : `The network fee is paid in ${coin}, not ${symbol}: keep a little ${coin} in the sending wallet.`;
}

function assetChoices(
  session: CheckoutSession,
  names: NetworkNames,
  chosen: string | null,
  wallet: WalletContext | null,
  /** Buttons that post the choice (the page's form, which works without the script); the preview's do nothing. */
  submit: boolean,
): string {
  // One asset offered and none chosen yet: without the script its button is the one step to the request, and says so.
  const onlyStep =
    submit && session.addresses.length === 1 && chosen === null
      ? '<span class="asset-step no-script-only">Show the amount and address to pay</span>'
      : '';
  // The merchant's preferred network comes first, said in words (part of the button's name), never chosen
  // for the payer: choosing records an event (and may add a network fee), which a page load must not do.
  const preferred = session.paymentSetting.preferredChainId;
  const isPreferred = (a: SessionAddress) => preferred !== null && a.asset.chainId === preferred;
  const ordered = [...session.addresses.filter(isPreferred), ...session.addresses.filter((a) => !isPreferred(a))];
  const mark = '<span class="asset-preferred">Preferred network</span>';
  return ordered
    .map(
      (a) => `
        <button type="${submit ? 'submit' : 'button'}"${submit ? ` name="assetId" value="${e(a.id)}"` : ''} class="asset" data-asset="${e(a.id)}" aria-pressed="${a.id === chosen}" data-family="${e(familyOf(a, wallet))}" data-fee-hint="${e(feeHint(a, wallet))}">
          <img class="asset-icon" src="${e(assetIconUrl(a.asset))}" alt="" width="32" height="32">
          <span class="asset-text"><span class="asset-name">${e(a.asset.name)} <span class="asset-symbol">${e(a.asset.symbol)}</span></span>
          <span class="asset-network"><img src="${e(networkIconUrl(a.network, a.asset.chainId))}" alt="" width="14" height="14"> on ${e(names(a.network))}</span>${isPreferred(a) ? mark : ''}${onlyStep}</span>
        </button>`,
    )
    .join('');
}

/** The request to pay now as the server draws it (`payment` of the status) and its QR code (an SVG document). */
export type ServerRequest = { payment: NonNullable<PayerStatus['payment']>; qrSvg: string; reference: string | null };

/** What the reveal shows of a request, as checkout.js fills it in: the address as wallets show it. */
const revealed = (request: ServerRequest) => ({
  ...request.payment,
  address: shownAddress(request.payment.address),
  qrSvg: request.qrSvg,
  reference: request.reference,
});

/**
 * What was sent covers the rest and waits for its confirmations (or the session is paid): the page
 * offers nothing to choose, send or cancel, so the payer is not invited to pay twice. checkout.js
 * shows the controls again if such a payment is withdrawn.
 */
const nothingToSend = (status: PayerStatus): boolean => BigInt(status.amountToSend) === 0n;

const cancelWarning = (returnTo: string) => `You will return to ${e(returnTo)}. Do not send a payment after canceling.`;

/**
 * Cancel without the script: no dialog asks first, so the button opens a disclosure that says what
 * canceling does, and its form posts the cancel (the server then sends the payer to the cancel URL).
 */
const noScriptCancel = (sessionId: string, returnTo: string) =>
  `<noscript><details class="cancel-confirm"><summary>Cancel payment</summary><form method="post" action="/checkout/${e(sessionId)}"><p>${cancelWarning(returnTo)}</p><button type="submit" name="action" value="cancel" class="danger">Cancel payment</button></form></details></noscript>`;

/** The payment panel while the session takes payments: asset choice, the revealed address and QR, cancel. */
function payPanel(
  session: CheckoutSession,
  status: PayerStatus,
  names: NetworkNames,
  wallet: WalletContext | null,
  request: ServerRequest | null,
  preview: boolean,
  refusedCode: string,
): string {
  // The session's choice, not the status's request: that is null while nothing is left to send, and the
  // choice must stay pressed so that checkout.js asks again for it if the payment covering the rest is withdrawn.
  const chosen = session.paymentIntent.paymentMethod?.id ?? null;
  const chosenAddress = session.addresses.find((a) => a.id === chosen);
  const chosenFamily = chosenAddress ? familyOf(chosenAddress, wallet) : null;
  const chosenHint = chosenAddress ? feeHint(chosenAddress, wallet) : '';
  // Only the wallets of the chosen asset's network show; checkout.js shows another family when the payer switches.
  const family = (name: string, actions: string) =>
    `<div class="wallet-family needs-script" data-wallet-family="${name}"${name === chosenFamily ? '' : ' hidden'}>${actions}</div>`;
  // The asset buttons post the choice as a plain form: checkout.js takes the click instead and asks
  // without leaving the page; without it the server records the choice and draws the request below.
  const choices = assetChoices(session, names, chosen, wallet, !preview);
  const reveal = request ? revealed(request) : null;
  const text = (value: string | undefined) => e(value ?? '');
  return `<div id="pay-controls"${nothingToSend(status) ? ' hidden' : ''}>
    <h2 id="pay-title">Choose how to pay</h2>
    ${
      preview
        ? `<div id="assets" class="assets" role="group" aria-labelledby="pay-title">${choices}
    </div>`
        : `<form method="post" action="/checkout/${e(session.id)}"><div id="assets" class="assets" role="group" aria-labelledby="pay-title">${choices}
    </div></form>`
    }
    ${
      session.allowPromotionCodes
        ? `<form id="promo" class="promo"${preview ? '' : ` method="post" action="/checkout/${e(session.id)}"`}><input type="hidden" name="action" value="promotion-code"><label for="promo-code">Promotion code</label><span class="promo-row"><input id="promo-code" name="code" autocomplete="off" maxlength="100"${refusedCode ? ` value="${e(refusedCode)}"` : ''}> <button type="submit" class="secondary">Apply</button></span> <span id="promo-result" class="muted" role="status"></span></form>`
        : ''
    }
    <section id="reveal" class="reveal" aria-labelledby="reveal-title"${reveal ? '' : ' hidden'}>
      <h3 id="reveal-title" class="send" tabindex="-1">Send <strong><span id="due">${text(reveal?.amountDue)}</span> <span id="symbol">${text(reveal?.symbol)}</span></strong> on <span id="network">${text(reveal?.networkName)}</span></h3>
      <div class="field">
        <span class="field-label" id="amount-label">Amount</span>
        <span class="field-value"><code id="due-copy" aria-labelledby="amount-label">${text(reveal?.amountDue)}</code>
        <button type="button" class="copy secondary needs-script" data-copy="due-copy" aria-label="Copy amount">Copy</button></span>
      </div>
      <div class="field">
        <span class="field-label" id="address-label">To address</span>
        <span class="field-value"><code id="address" aria-labelledby="address-label">${text(reveal?.address)}</code>
        <button type="button" class="copy secondary needs-script" data-copy="address" aria-label="Copy address">Copy</button></span>
      </div>
      ${
        reveal?.reference
          ? `<div class="field" id="reference-field">
        <span class="field-label" id="reference-label">Reference</span>
        <span class="field-value"><code id="reference" aria-labelledby="reference-label">${e(reveal.reference)}</code></span>
      </div>`
          : ''
      }
      <p class="warning" data-unless-family="solana"${chosenFamily === 'solana' ? ' hidden' : ''}>Send only <span id="symbol-warning">${text(reveal?.symbol)}</span> on <span id="network-warning">${text(reveal?.networkName)}</span> to this address.</p>
      <p class="warning" id="solana-warning" data-wallet-family="solana"${chosenFamily === 'solana' ? '' : ' hidden'}>Pay by scanning the code with a Solana Pay wallet<span class="needs-script">, or with the wallet button below</span>: the payment must carry this order’s reference. A transfer typed in by hand or sent from an exchange to this address cannot be matched to this order.</p>
      <p class="muted" id="fee-hint"${chosenHint ? '' : ' hidden'}>${e(chosenHint)}</p>
      <div class="qr-block">
        <div id="qr" role="img" aria-label="QR code of the payment request">${reveal?.qrSvg ?? ''}</div>
        <div class="qr-side">
          <a id="open-wallet" class="button" href="${reveal ? e(reveal.paymentUri) : '#'}" data-unless-family="tron"${chosenFamily === 'tron' ? ' hidden' : ''}>Open in wallet</a>
          <p class="muted" data-unless-family="tron"${chosenFamily === 'tron' ? ' hidden' : ''}>Scan the code with a wallet app, or open the request in a wallet on this device.</p>
          <p class="muted" id="tron-scan" data-wallet-family="tron"${chosenFamily === 'tron' ? '' : ' hidden'}>The code holds the address only: scan it with a Tron wallet, then enter the amount above exactly.</p>
        </div>
      </div>
      ${family('evm', renderWalletActions(session, wallet))}
      ${family('solana', renderSolanaWalletActions(session))}
      ${family('tron', renderTronWalletActions(session, wallet))}
    </section>
    ${cancelControls(session, preview)}
    </div>`;
}

/** Cancel, asked first in a dialog (checkout.js), or a disclosure and a form without it; none without a cancel URL. */
function cancelControls(session: CheckoutSession, preview: boolean): string {
  if (!session.cancelUrl) return '';
  const returnTo = session.cancelUrl.replace(/^https?:\/\//, '').split('/')[0]!;
  return `<div class="cancel-row" id="cancel-row"${session.status === 'incomplete' ? ' hidden' : ''}><button type="button" id="cancel" class="link-button needs-script">Cancel payment</button>${preview ? '' : noScriptCancel(session.id, returnTo)}</div>
    <dialog id="cancel-dialog" aria-labelledby="cancel-title" aria-describedby="cancel-text">
      <h2 id="cancel-title">Cancel this payment?</h2>
      <p id="cancel-text">${cancelWarning(returnTo)}</p>
      <div class="dialog-actions">
        <button type="button" id="cancel-keep" class="secondary">Keep paying</button>
        <button type="button" id="cancel-confirm" class="danger">Cancel payment</button>
      </div>
    </dialog>`;
}

/**
 * The first step of a subscription session that names no customer: the payer's email, to which its
 * renewal invoices are mailed, before any asset is offered. A plain form (the page with or without
 * its script); a refused email stays in its input, marked invalid, with why under it.
 */
function emailPanel(session: CheckoutSession, refused: { email: string; detail: string } | null): string {
  const invalid = refused
    ? ' aria-invalid="true" aria-describedby="customer-email-hint customer-email-error"'
    : ' aria-describedby="customer-email-hint"';
  return `<div id="pay-controls">
    <h2 id="pay-title">Your email</h2>
    <form id="email-step" class="email-step" method="post" action="/checkout/${e(session.id)}"><input type="hidden" name="action" value="email">
      <label for="customer-email">Email</label>
      <p class="muted" id="customer-email-hint">This is a subscription: its renewal invoices are sent to this address. You choose how to pay next.</p>
      <input id="customer-email" name="email" type="email" autocomplete="email" required maxlength="254" value="${e(refused?.email ?? '')}"${invalid}>
      ${refused ? `<p class="error" id="customer-email-error">${e(refused.detail)}</p>` : ''}
      <button type="submit" class="primary">Continue</button>
    </form>
    ${cancelControls(session, false)}
    </div>`;
}

/** Whom to ask about a payment that came after the close: the business's support contact, when it has one. */
function lateContact(org: Organization | null, business: string): string {
  if (!org) return '';
  const links = contactLinks(org);
  const page = supportUrlOf(org);
  if (page) links.push(`<a href="${e(page)}">support page</a>`);
  if (links.length === 0) return '';
  return `<p id="late-contact">Questions about this payment: contact ${e(business)} at ${links.join(' · ')}.</p>`;
}

/** The panel of a session that is over: what happened, and the way back to the merchant. */
function finalPanel(session: CheckoutSession, status: PayerStatus, org: Organization | null, business: string): string {
  const message = status.message ? `<p id="confirmation-message">${e(status.message)}</p>` : '';
  // By the one rule the status above tells late money by (dust included): the contact goes with its words.
  const late = paidAfterClose(session) ? lateContact(org, business) : '';
  const back = status.returnUrl
    ? `<p><a id="return-link" class="button" href="${e(status.returnUrl)}">Return to ${e(business)}</a></p>`
    : '';
  // The page has no script once over, so the payer's own zone is unknown: the time says its zone.
  const when =
    session.status === 'complete' && session.completedAt
      ? `<p class="muted">${isFree(session) ? 'Completed' : 'Paid'} on <time datetime="${e(session.completedAt)}">${e(utcDateTime(session.completedAt))}</time>.</p>`
      : '';
  // One template: checkout.js takes this very block from the page it fetches once the session is over.
  return `<div id="final-panel">${message}${when}${late}${back}</div>`;
}

/** A complete session that asked for nothing (a 100% promotion code) and got nothing: an order, not a payment. */
const isFree = (session: CheckoutSession): boolean =>
  BigInt(session.amountTotal) === 0n && BigInt(session.amountReceived) === 0n;

/** `2026-01-01T16:45:09Z` → `1 January 2026, 16:45 UTC`. */
const utcDateTime = (iso: string): string =>
  `${new Intl.DateTimeFormat('en-GB', { dateStyle: 'long', timeZone: 'UTC' }).format(new Date(iso))}, ${iso.slice(11, 16)} UTC`;

/** The page's heading: what it asks of the payer, or once complete, that it is done. */
function heading(session: CheckoutSession, business: string): string {
  if (session.status !== 'complete') return `Pay ${business}`;
  return isFree(session) ? `Order with ${business} complete` : `Paid to ${business}`;
}

/** A status's detail, its claim that the page follows the session marked to be hidden without the script (the reload hint says what to do instead). */
function statusDetail(detail: string): string {
  const live = LIVE_CLAUSE.exec(detail);
  if (!live) return e(detail);
  const rest = detail.slice(live.index + live[0].length);
  return `${e(detail.slice(0, live.index))}<span class="needs-script">; ${e(live[1])}</span>${e(rest)}`;
}

/** What is left before `expiresAt` at `now`, in words ("1 h 5 min"): checkout.js counts it down by the second. */
function timeLeft(expiresAt: string, now: string): string {
  const minutes = Math.max(0, Math.floor((Date.parse(expiresAt) - Date.parse(now)) / 60_000));
  if (minutes === 0) return 'less than a minute';
  const h = Math.floor(minutes / 60);
  return h > 0 ? `${h} h ${minutes % 60} min` : `${minutes} min`;
}

/**
 * The hosted checkout page, server-rendered in the session's current state: the order with its
 * totals (due, paid, remaining) beside the payment panel. While open it offers the assets, and a
 * small script (assets/checkout.js) reveals the address and QR for the chosen one, follows the
 * status, counts down to the expiry and asks before canceling. A session that is over shows what
 * happened and the way back, with no controls. Without the script the page still takes a payment:
 * the asset buttons post a form, and the request chosen (amount, address, reference, QR, time left) is
 * drawn here; a reload shows the status.
 */
export function renderCheckoutPage(input: {
  session: CheckoutSession;
  org: Organization | null;
  status: PayerStatus;
  names: NetworkNames;
  products: ReadonlyMap<string, ProductView>;
  /** The networks and local devnet the wallet actions need; none: no wallet actions. */
  wallet?: WalletContext | null;
  /** A preview of the page (the dashboard's branding settings): without its script, so nothing follows a session. */
  preview?: boolean;
  /** The QR code of `status.payment` (an SVG document), so the request shows without the script; none: drawn by it. */
  qrSvg?: string | null;
  /**
   * A choice the page's form posted and the session refused: said in the status instead of its own words.
   * `code`: the promotion code refused, kept in its input so the payer corrects it rather than types it again;
   * `email`: likewise the email refused.
   */
  problem?: { title: string; detail: string; code?: string; email?: string } | null;
}): string {
  const { session, org, status, names } = input;
  const business = org?.name ?? 'Checkout';
  const currency = status.currency;
  const final = FINAL.has(session.status);
  const chosen = session.addresses.find((a) => a.id === status.payment?.assetId);
  // A Solana payment is matched by the reference its request carries: the payer without the script is shown it too.
  const request: ServerRequest | null =
    status.payment && input.qrSvg
      ? {
          payment: status.payment,
          qrSvg: input.qrSvg,
          reference: chosen && isSolanaAddress(chosen) ? chosen.paymentAddress : null,
        }
      : null;
  const { title, detail } = input.problem ?? status;
  const countdown = final
    ? ''
    : `<p class="countdown" id="countdown"${nothingToSend(status) || session.status === 'incomplete' ? ' hidden' : ''}>Expires in <time id="expires" datetime="${e(session.expiresAt)}" data-now="${e(status.now)}">${e(timeLeft(session.expiresAt, status.now))}</time><noscript> (at ${e(session.expiresAt.slice(11, 16))} UTC)</noscript></p>`;
  // checkout.js follows the status; without it the payer reloads to see a payment arrive.
  const reloadHint =
    final || input.preview
      ? ''
      : `<noscript><p class="muted" id="reload-hint">This page does not update by itself without JavaScript, so <a href="/checkout/${e(session.id)}">reload it</a> to see whether your payment has arrived.</p></noscript>`;
  return hostedPage({
    title: heading(session, business),
    kind: 'checkout',
    org,
    business,
    testMode: session.environment === 'test',
    main: `  <section class="summary" aria-labelledby="summary-title">
    <h1 id="summary-title" class="muted-heading">${e(heading(session, business))}</h1>
    <p class="total"><span id="amount">${e(status.amountTotalFormatted)}</span> ${e(currency)}${every(totalRecurrence(session))}</p>
    <ul class="items">${lineItems(session, input.products, currency)}
    </ul>
    ${totals(session, status)}
  </section>
  <section class="pay" aria-label="Payment">
    <div id="status" class="status" role="status" aria-live="polite" data-status="${e(session.status)}" data-state="${e(status.state)}"${input.problem ? ' data-problem' : ''}>
      <span class="status-dot" aria-hidden="true"></span>
      <span class="status-text"><strong id="status-title">${e(title)}</strong>
      <span id="status-detail">${statusDetail(detail)}</span></span>
    </div>
    ${countdown}
    ${reloadHint}
    ${final ? finalPanel(session, status, org, business) : needsCustomerEmail(session) && !input.preview ? emailPanel(session, input.problem?.email === undefined ? null : { email: input.problem.email, detail: input.problem.detail }) : payPanel(session, status, names, input.wallet ?? null, request, input.preview === true, input.problem?.code ?? '')}
    <p id="copied" class="visually-hidden" role="status" aria-live="polite"></p>
  </section>`,
    footer: businessFooter(org),
    ...(input.preview ? { landmarks: { header: 'Preview: business name', main: 'Preview: checkout page' } } : {}),
    // hosted-fetch.js: how checkout.js and the wallet scripts read a route's answer.
    ...(final || input.preview
      ? {}
      : {
          script: { name: 'checkout.js' as const, data: { session: session.id }, needs: ['hosted-fetch.js' as const] },
        }),
  });
}
