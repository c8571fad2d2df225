// The hosted checkout page: reveals the deposit address, amount and QR code for the chosen asset,
// keeps them on the remaining amount, follows the session's status (polling), counts down to the
// expiry, copies, applies a promotion code and asks before canceling. Served by Weir from /assets.
const base = `/checkout/${document.currentScript.dataset.session}`;
const $ = (id) => document.getElementById(id);
const statusEl = $('status');
const json = { 'content-type': 'application/json' };
const FINAL = ['complete', 'expired', 'canceled'];
let chosen = document.querySelector('.asset[aria-pressed="true"]');
let shownRemaining = null;
/** A cancel is on its way: its answer says where the payer goes, so the poll must not reload the page under it. */
let leaving = false;
let shownUri = null;
/** What was sent covers the rest (or the session is paid): the page asks for nothing (see checkout-page.ts). */
let nothingToSend = $('pay-controls').hidden;

/** The request to pay: amount, QR and wallet link, as the server gives them (`payment` of the status, or the chosen method). */
function request(p) {
  $('due').textContent = p.amountDue;
  $('due-copy').textContent = p.amountDue;
  $('symbol').textContent = p.symbol;
  $('symbol-warning').textContent = p.symbol;
  $('network').textContent = p.networkName;
  $('network-warning').textContent = p.networkName;
  $('address').textContent = p.address;
  $('qr').innerHTML = p.qrSvg;
  $('open-wallet').href = p.paymentUri;
  shownUri = p.paymentUri;
}

/**
 * What the page says when the server gives no answer of its own: CHECKOUT_NOTICES.unavailable's words
 * (page-notices.ts), the heading here and the words with `answer` (hosted-fetch.js, loaded before this script).
 */
const UNAVAILABLE = 'Checkout not available just now';
const { answer, UNREACHABLE } = window.weirHosted;

/** A refusal as the page's routes word it for the payer (as its forms do without this script), shown as it is. */
function refusal(body) {
  return typeof body?.message === 'string' && body.message !== '' ? body.message : 'This could not be done: try again.';
}

function say(title, detail) {
  $('status-title').textContent = title;
  $('status-detail').textContent = detail;
}

/**
 * A refusal the payer must read, and the state the session was in when it was shown (null: none): the
 * status poll leaves it until the payer acts again, or the session itself moves on (a payment, the end).
 * A refusal the server drew (a form posted before this script ran, or the email step's, script or not)
 * is marked `data-problem` on the status: kept the same way.
 */
let problem = 'problem' in statusEl.dataset ? statusEl.dataset.state : null;
function sayProblem(title, detail) {
  problem = statusEl.dataset.state;
  say(title, detail);
}

/** The last choice got no answer: the next status answered asks for it again. */
let unanswered = false;
async function choose(button, focus = false) {
  for (const b of document.querySelectorAll('.asset[data-asset]')) b.setAttribute('aria-pressed', String(b === button));
  chosen = button;
  const res = await answer(`${base}/payment-method`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ assetId: button.dataset.asset }),
  });
  unanswered = res === null;
  // The request shown before was for another asset: hidden, so nothing invites paying what was refused.
  if (!res?.ok) $('reveal').hidden = true;
  // No answer is no refusal: said (the payer acted, so a problem shown before gives way) until a
  // status poll is answered, which asks for this choice again.
  if (!res) {
    problem = null;
    return say(UNAVAILABLE, UNREACHABLE);
  }
  if (!res.ok) return sayProblem('This asset cannot be used', refusal(res.body));
  const body = res.body;
  problem = null;
  request(body);
  // Only the wallets of the chosen asset's network (EVM, Solana or Tron), as the server renders them.
  for (const el of document.querySelectorAll('[data-wallet-family]'))
    el.hidden = el.dataset.walletFamily !== button.dataset.family;
  // A Solana payment is matched by the reference its request carries: the plain "send to this address" does not hold there;
  // Tron wallets refuse the `tron:` link, so "Open in wallet" is not offered there (the TronLink button is).
  for (const el of document.querySelectorAll('[data-unless-family]'))
    el.hidden = el.dataset.unlessFamily === button.dataset.family;
  // A token's network fee is paid in the network's coin: the server words it per asset.
  $('fee-hint').textContent = button.dataset.feeHint;
  $('fee-hint').hidden = !button.dataset.feeHint;
  $('reveal').hidden = false;
  // The payer chose: take them (and a screen reader) to what to send.
  if (focus) $('reveal-title').focus();
  void poll(false);
}
// Choosing (again) is the payer acting: a problem shown stays until then, and the new answer replaces it.
// The buttons also post a plain form (the page without this script): here the choice is asked for in place.
for (const b of document.querySelectorAll('.asset[data-asset]'))
  b.addEventListener('click', (e) => {
    e.preventDefault();
    void choose(b, true);
  });
if (chosen && !nothingToSend) void choose(chosen);

// Copy buttons: the text of the element they name, announced for screen readers.
for (const button of document.querySelectorAll('button.copy[data-copy]')) {
  button.addEventListener('click', async () => {
    const text = $(button.dataset.copy).textContent;
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      const range = document.createRange();
      range.selectNodeContents($(button.dataset.copy));
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      document.execCommand('copy');
    }
    button.textContent = 'Copied';
    $('copied').textContent = `${button.getAttribute('aria-label').replace('Copy ', '')} copied`;
    setTimeout(() => {
      button.textContent = 'Copy';
    }, 2000);
  });
}

const promo = $('promo');
if (promo)
  promo.addEventListener('submit', async (e) => {
    e.preventDefault();
    // The payer acts again: a refusal shown before gives way to the status (this one is said beside the code).
    problem = null;
    const res = await answer(`${base}/promotion-code`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ code: new FormData(promo).get('code') }),
    });
    $('promo-result').textContent = !res ? UNREACHABLE : res.ok ? 'Applied' : refusal(res.body);
    // The discount changes the order's totals: the page is drawn again (the chosen asset stays).
    if (res?.ok) location.reload();
  });

// Cancel asks first, in a modal dialog (focus moves into it; Escape keeps paying).
const cancel = $('cancel');
const dialog = $('cancel-dialog');
if (cancel && dialog) {
  cancel.addEventListener('click', () => {
    dialog.showModal();
    $('cancel-keep').focus();
  });
  $('cancel-keep').addEventListener('click', () => dialog.close());
  $('cancel-confirm').addEventListener('click', async () => {
    leaving = true;
    const res = await answer(`${base}/cancel`, { method: 'POST' });
    dialog.close();
    if (res?.ok && res.body.redirectUrl) return location.assign(res.body.redirectUrl);
    if (res?.ok) return location.reload();
    sayProblem('Could not cancel', res ? refusal(res.body) : UNREACHABLE);
    leaving = false;
  });
}

// The countdown runs on the server's clock: the offset is taken from each status answer.
const expires = $('expires');
let offset = expires ? Date.parse(expires.dataset.now) - Date.now() : 0;
function tick() {
  if (!expires) return;
  const left = Math.max(0, Date.parse(expires.dateTime) - (Date.now() + offset));
  const s = Math.floor(left / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const pad = (n) => String(n).padStart(2, '0');
  expires.textContent = h > 0 ? `${h}:${pad(m)}:${pad(s % 60)}` : `${pad(m)}:${pad(s % 60)}`;
}
tick();
setInterval(tick, 1000);

/**
 * A finished session's panel (paid on, the way back), from the page as the server renders it now:
 * put where the controls were, so the live page shows what a reload would.
 */
async function showFinal() {
  try {
    const res = await fetch(location.pathname, { cache: 'no-store' });
    const page = new DOMParser().parseFromString(await res.text(), 'text/html');
    const fresh = page.getElementById('final-panel');
    if (!fresh || $('final-panel')) return;
    // The heading too: no longer "Pay …" once paid.
    const heading = page.getElementById('summary-title');
    if (heading) $('summary-title').textContent = heading.textContent;
    $('pay-controls').hidden = true;
    if (expires) $('countdown').hidden = true;
    $('pay-controls').before(document.importNode(fresh, true));
  } catch {
    // the redirect still goes, and the server's page shows the way back
  }
}

/**
 * Status polls in a row that got no answer (or a refusal). One is a blip: the notice waits for the
 * second, and the polls back off while they fail (1, 2, 4, 8 s, then every 10 s), every second again once answered.
 */
let pollsFailed = 0;
const nextPollIn = () => Math.min(1000 * 2 ** Math.max(0, pollsFailed - 1), 10_000);

async function poll(again = true) {
  try {
    const res = await answer(`${base}/status`, { cache: 'no-store' });
    if (!res?.ok) {
      pollsFailed += 1;
      // Said (not kept as a problem): the next status answered replaces it.
      if (pollsFailed >= 2 && problem === null) say(UNAVAILABLE, res ? refusal(res.body) : UNREACHABLE);
      if (again) setTimeout(poll, nextPollIn());
      return;
    }
    pollsFailed = 0;
    const s = res.body;
    // The page's other scripts (wallet.js) follow the session through this one poll.
    document.dispatchEvent(new CustomEvent('weir:status', { detail: s }));
    offset = Date.parse(s.now) - Date.now();
    statusEl.dataset.status = s.status;
    statusEl.dataset.state = s.state;
    if (problem !== null && problem !== s.state) problem = null;
    if (problem === null) say(s.title, s.detail);
    // Expired or canceled (or complete with nowhere to go), the server's page is what the payer sees: it
    // tells what was paid before the close apart from late money, which the status's totals add together,
    // so none of them is written here first. Not while a cancel's answer is awaited: a poll that saw the
    // cancel first would keep the payer from its cancel URL.
    if (FINAL.includes(s.status) && !(s.status === 'complete' && s.redirectUrl)) {
      if (!leaving) return location.reload();
      if (again) setTimeout(poll, nextPollIn());
      return;
    }
    $('amount').textContent = s.amountTotalFormatted;
    $('total-due').textContent = s.amountTotalFormatted;
    $('paid').textContent = s.amountReceivedFormatted;
    $('confirming').textContent = s.amountPendingFormatted;
    $('confirming-row').hidden = s.amountPending === '0';
    $('remaining').textContent = s.amountLeftFormatted;
    // After a partial payment the request (amount, QR, wallet link) follows what is left to pay.
    if (shownRemaining !== null && shownRemaining !== s.amountRemaining && chosen && !FINAL.includes(s.status))
      void choose(chosen);
    shownRemaining = s.amountRemaining;
    // Once what was sent covers the rest, nothing invites a second payment; a payment withdrawn asks again.
    const covered = s.amountToSend === '0';
    $('pay-controls').hidden = covered;
    // A partly paid session no longer expires: it waits for the rest, so no countdown runs out over it.
    if (expires) $('countdown').hidden = covered || s.status === 'incomplete';
    // Partly paid, it cannot be canceled (the money received stays accounted for): no cancel is offered.
    if ($('cancel-row')) $('cancel-row').hidden = s.status === 'incomplete';
    if (s.status === 'incomplete' && dialog?.open) dialog.close();
    if (covered && dialog?.open) dialog.close();
    if ((nothingToSend || unanswered) && !covered && chosen && !FINAL.includes(s.status)) void choose(chosen);
    nothingToSend = covered;
    if (s.payment && s.payment.paymentUri !== shownUri && !$('reveal').hidden) request(s.payment);
    if (s.status === 'complete' && s.redirectUrl) {
      // Shown as the server renders it (paid on, the way back) in case the redirect does not happen.
      await showFinal();
      setTimeout(() => location.assign(s.redirectUrl), 1500);
      return;
    }
  } catch {
    // keep polling through network blips
  }
  if (again) setTimeout(poll, nextPollIn());
}
void poll();
