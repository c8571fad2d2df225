// The hosted checkout page: reveals the deposit address and QR code for the chosen asset, applies
// a promotion code, cancels, and follows the session's status. Served by Weir from /assets.
const base = `/checkout/${document.currentScript.dataset.session}`;
const statusEl = document.getElementById('status');
const json = { 'content-type': 'application/json' };

async function choose(button) {
  for (const b of document.querySelectorAll('.asset[data-asset]')) b.setAttribute('aria-pressed', String(b === button));
  const res = await fetch(`${base}/payment-method`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ assetId: button.dataset.asset }),
  });
  const body = await res.json();
  if (!res.ok) {
    statusEl.textContent = body.message;
    return;
  }
  document.getElementById('due').textContent = body.amountDue;
  document.getElementById('symbol').textContent = body.symbol;
  document.getElementById('network').textContent = body.network;
  document.getElementById('address').textContent = body.address;
  document.getElementById('qr').innerHTML = body.qrSvg;
  document.getElementById('reveal').hidden = false;
}
for (const b of document.querySelectorAll('.asset[data-asset]')) b.addEventListener('click', () => choose(b));

const promo = document.getElementById('promo');
if (promo)
  promo.addEventListener('submit', async (e) => {
    e.preventDefault();
    const res = await fetch(`${base}/promotion-code`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ code: new FormData(promo).get('code') }),
    });
    const body = await res.json();
    document.getElementById('promo-result').textContent = res.ok ? 'Applied' : body.message;
    if (res.ok) {
      document.getElementById('amount').textContent = (Number(body.amountTotal) / 1e8).toString();
      const chosen = document.querySelector('.asset[aria-pressed="true"]');
      if (chosen) void choose(chosen);
    }
  });

const cancel = document.getElementById('cancel');
if (cancel)
  cancel.addEventListener('click', async () => {
    const res = await fetch(`${base}/cancel`, { method: 'POST' });
    const body = await res.json();
    if (body.redirectUrl) location.assign(body.redirectUrl);
    else statusEl.textContent = body.message;
  });

async function poll() {
  try {
    const res = await fetch(`${base}/status`, { cache: 'no-store' });
    const s = await res.json();
    statusEl.dataset.status = s.status;
    statusEl.textContent = `Status: ${s.status}${s.paymentStatus === 'paid' ? ' (paid)' : ''}`;
    document.getElementById('received').textContent =
      s.amountReceived !== '0' ? `Received ${s.amountReceivedFormatted} ${s.currency}` : '';
    if (s.status === 'complete' && s.message) document.getElementById('received').textContent = s.message;
    if (s.status === 'complete' && s.redirectUrl) {
      location.assign(s.redirectUrl);
      return;
    }
    if (s.status === 'expired' || s.status === 'canceled') return;
  } catch {
    // keep polling through network blips
  }
  setTimeout(poll, 1000);
}
void poll();
