import { readFile } from 'node:fs/promises';
import test from 'ava';
import { sessionFixture } from '../../machines/checkout-session.fixture.ts';
import type { CheckoutSession, SessionLineItem } from '../../machines/checkout-session.types.ts';
import { SOLANA_LOCALNET_CHAIN_ID } from '../chain-ingest/solana/networks.ts';
import { TEST_NETWORK } from '../chain-ingest/test-rail.ts';
import { toTronRailNetwork } from '../chain-ingest/tron/define-network.ts';
import { tronLocalNetwork, tronNile } from '../chain-ingest/tron/networks.ts';
import { evolveOrganization, type Organization } from '../actors/organization.ts';
import { renderCheckoutPage } from './checkout-page.ts';
import { payerStatus } from './checkout-status.ts';
import { NOW, fineGrainedPayment, names, pay, payment, withUsdcChosen } from './payer-status.fixture.ts';

/** Two of a 1.50 USDC flat white: the fixture's 3 USDC. */
const flatWhites: SessionLineItem = {
  description: null,
  quantity: 2,
  price: {
    id: 'price-1',
    productId: 'prod-1',
    product: { id: 'prod-1', name: 'Flat white', description: null, isActive: true },
    type: 'one_time',
    currency: 'usdc',
    unitAmount: '150000000',
    interval: null,
    intervalCount: null,
    isActive: true,
  },
  amountSubtotal: '300000000',
  amountTotal: '300000000',
  currency: 'usdc',
};

/** The session of the flat whites with USDC chosen as the payment method. */
const chosen = (overrides: Partial<CheckoutSession> = {}): CheckoutSession =>
  withUsdcChosen(sessionFixture({ lineItems: { object: 'list', data: [flatWhites] }, ...overrides }));
const render = (session: CheckoutSession) => {
  const status = payerStatus(session, names, NOW, undefined, pay);
  return { status, html: renderCheckoutPage({ session, org: null, status, names, products: new Map() }) };
};
const text = (html: string, id: string) => new RegExp(`id="${id}"[^>]*>([^<]*)<`).exec(html)?.[1];
const isHidden = (html: string, id: string) => new RegExp(`id="${id}"[^>]* hidden`).test(html);

test('prices and totals read as on the invoice and the dashboard (1.50 USDC), while the amount to send stays exact and unpadded', (t) => {
  const { status, html } = render(chosen());
  t.is(text(html, 'amount'), '3.00');
  t.regex(html, /<span class="item-unit">1\.50 USDC each<\/span>/);
  t.regex(html, /<span class="item-amount">3\.00 USDC<\/span>/);
  t.is(text(html, 'subtotal'), '3.00');
  t.is(text(html, 'total-due'), '3.00');
  t.is(text(html, 'paid'), '0.00');
  t.is(text(html, 'remaining'), '3.00');
  t.true(isHidden(html, 'confirming-row'), 'nothing confirming');
  // What the payer copies into a wallet, and the wallet request: the exact chain amount, as before.
  t.like(status.payment, { amountDue: '3', amountDueRaw: '3000000' });
  t.regex(status.payment?.paymentUri ?? '', /uint256=3000000$/);
  t.is(status.amountToSendFormatted, '3');

  const cancelable = render(chosen({ cancelUrl: 'https://shop.example/cart' })).html;
  t.true(
    cancelable.includes('id="cancel-row"') && !isHidden(cancelable, 'cancel-row'),
    'an open session may be canceled',
  );
  const partly = render(
    chosen({
      cancelUrl: 'https://shop.example/cart',
      status: 'incomplete',
      amountReceived: '100000001',
      payments: [fineGrainedPayment('100000001', 'confirmed')],
    }),
  );
  t.is(text(partly.html, 'paid'), '1.00000001');
  // USDC has 6 decimals: the request is rounded up so that paying it covers the rest, and the
  // Remaining row and the words ask that too (they asked 1.99999999, which USDC cannot send).
  t.is(text(partly.html, 'remaining'), '2.00');
  t.is(partly.status.detail, '1.00000001 USDC of 3.00 USDC received. Send the remaining 2.00 USDC to finish.');
  t.like(partly.status.payment, { amountDue: '2', amountDueRaw: '2000000' });
  // Partly paid, the session no longer expires (it waits for the rest): no countdown runs out over the request.
  t.false(isHidden(partly.html, 'pay-controls'));
  t.true(isHidden(partly.html, 'countdown'));
  // Partly paid, it cannot be canceled (the money received stays accounted for): no cancel is offered.
  t.true(isHidden(partly.html, 'cancel-row'));
});

test('once the full amount is seen and waits for confirmation, the page says it was received and asks for nothing more: no asset choice, address, QR, wallet link, cancel or countdown', (t) => {
  const { status, html } = render(
    chosen({ cancelUrl: 'https://shop.example/cart', payments: [payment('300000000', 'pending')] }),
  );
  t.like(status, { state: 'confirming', title: 'Payment received', amountToSend: '0', payment: null });
  t.is(
    status.detail,
    '3.00 USDC received, waiting for the network to confirm it. Nothing more to send; this page updates by itself.',
  );
  t.notRegex(status.title, /Paid/);
  t.is(text(html, 'status-title'), 'Payment received');
  // Paid, Confirming and Remaining make the total: nothing is left to send.
  t.is(text(html, 'paid'), '0.00');
  t.is(text(html, 'confirming'), '3.00');
  t.false(isHidden(html, 'confirming-row'));
  t.is(text(html, 'remaining'), '0.00');
  t.true(isHidden(html, 'pay-controls'), 'the asset choice and the request are hidden');
  t.true(isHidden(html, 'countdown'), 'an expiry that no longer applies is not counted down');
  t.regex(html, /<div id="pay-controls" hidden>[\s\S]*id="reveal"[\s\S]*id="open-wallet"[\s\S]*id="cancel"/);
  // The choice stays pressed though there is no request: checkout.js asks for it again if the payment is withdrawn.
  t.regex(html, /data-asset="addr-usdc" aria-pressed="true"/);
});

test('a payment paid in time and taken off the chain by a reorg, which the session waits for: the page asks for nothing and tells the payer not to send it again', (t) => {
  const withdrawn = { ...payment('300000000', 'withdrawn'), mayReturn: true as const };
  const { status, html } = render(chosen({ expiresAt: '2026-01-01T00:30:00.000Z', payments: [withdrawn] }));
  t.like(status, { state: 'confirming', title: 'Waiting for your payment again', amountToSend: '0', payment: null });
  t.regex(
    status.detail,
    /^Your payment of 3\.00 USDC was taken off the network by a chain reorganization\..*Do not send it again\.$/,
  );
  t.true(isHidden(html, 'pay-controls'), 'nothing invites a second payment');
  // Paid, Confirming and Remaining make the total: the awaited payment is counted as on its way.
  t.is(text(html, 'confirming'), '3.00');
  t.false(isHidden(html, 'confirming-row'));
  t.is(text(html, 'remaining'), '0.00');
  // Withdrawn for good, it is asked for again, as before.
  const gone = render(chosen({ payments: [payment('300000000', 'withdrawn')] })).status;
  t.like(gone, { state: 'waiting', amountToSend: '300000000' });
});

test('a payment that covers only part of the rest still shows the request for what is left', (t) => {
  const { status, html } = render(chosen({ payments: [payment('100000000', 'pending')] }));
  t.like(status, { state: 'confirming', title: 'Confirming your payment', amountToSend: '200000000' });
  t.regex(
    status.detail,
    /^1\.00 USDC seen on the network, waiting for its confirmations\. Send the remaining 2\.00 USDC/,
  );
  t.like(status.payment, { amountDue: '2', amountDueRaw: '2000000' });
  t.false(isHidden(html, 'pay-controls'));
  t.false(isHidden(html, 'countdown'));
});

test('a Solana asset chosen: the page says the payment must come from the Solana Pay request (its reference), not a transfer typed in by hand, and drops "send to this address"', (t) => {
  const evm = render(chosen()).html;
  const onSolana = (session: CheckoutSession): CheckoutSession => ({
    ...session,
    addresses: session.addresses.map((a, i) =>
      i === 0 ? { ...a, network: 'solana-local', asset: { ...a.asset, chainId: SOLANA_LOCALNET_CHAIN_ID } } : a,
    ),
  });
  const solana = render(onSolana(chosen())).html;
  const plain = /<p class="warning" data-unless-family="solana"( hidden)?>Send only/;
  t.is(plain.exec(evm)?.[1], undefined, 'an EVM asset: send only it to this address');
  t.is(plain.exec(solana)?.[1], ' hidden');
  t.false(isHidden(solana, 'solana-warning'));
  t.regex(
    solana,
    /id="solana-warning"[^>]*>Pay by scanning the code with a Solana Pay wallet<span class="needs-script">, or with the wallet button below<\/span>:[^<]*typed in by hand[^<]*cannot be matched/,
  );
  t.true(isHidden(evm, 'solana-warning'));
});

/** The local Tron, and the chosen session with its first asset moved onto it as `currency`, rendered with Tron's wallet context. */
const tronLocal = toTronRailNetwork(
  tronLocalNetwork({ usdt: 'TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL', usdc: 'TBDCyrZ1hT1PDDFf2yRABwPrFica5qqPUX' }),
);
const onTron = (session: CheckoutSession, currency: string): CheckoutSession => ({
  ...session,
  addresses: session.addresses.map((a, i) =>
    i === 0
      ? {
          ...a,
          network: 'tron-local',
          asset: tronLocal.assets.find((x) => x.currency === currency)!,
          paymentAddress: 'TWd4WrZ9wn84f5x1hZhL4DHvk738ns5jwb',
        }
      : a,
  ),
});
const tronPage = (s: CheckoutSession) => {
  const status = payerStatus(s, names, NOW, undefined, pay);
  const wallet = { networks: [tronLocal], devnet: null, tronDevnet: null };
  return renderCheckoutPage({ session: s, org: null, status, names, products: new Map(), wallet });
};

test('a Tron asset chosen: the page says its code holds the address only and the amount is entered by hand, and offers the TronLink button, not the tron: link wallets refuse', (t) => {
  const session = chosen();
  const tron = tronPage(onTron(session, 'usdt'));
  t.false(isHidden(tron, 'tron-scan'));
  t.regex(tron, /id="tron-scan"[^>]*>The code holds the address only[^<]*enter the amount above exactly/);
  t.regex(tron, /data-unless-family="tron" hidden>Scan the code with a wallet app/);
  // Wallets refuse the `tron:` link: no "Open in wallet" for Tron, the TronLink button instead.
  t.true(isHidden(tron, 'open-wallet'));
  t.regex(tron, /<div class="wallet-family needs-script" data-wallet-family="tron">[\s\S]*TronLink/);
  const evm = tronPage(session);
  t.false(isHidden(evm, 'open-wallet'));
  t.true(isHidden(evm, 'tron-scan'));
  t.regex(evm, /data-unless-family="tron">Scan the code with a wallet app/);
});

test('a token chosen: the page says the network fee is paid in the network coin (on Tron, that a transfer can burn several TRX); the coin itself needs no such line', (t) => {
  // Nile charges its fee in TRX, as mainnet does.
  const nile = toTronRailNetwork(tronNile);
  const onNile = (s: CheckoutSession): CheckoutSession => {
    const local = onTron(s, 'usdt');
    const [first, ...rest] = local.addresses;
    return {
      ...local,
      addresses: [
        { ...first!, network: nile.network, asset: nile.assets.find((x) => x.currency === 'usdt')! },
        ...rest,
      ],
    };
  };
  const nilePage = (s: CheckoutSession) =>
    renderCheckoutPage({
      session: s,
      org: null,
      status: payerStatus(s, names, NOW, undefined, pay),
      names,
      products: new Map(),
      wallet: { networks: [nile], devnet: null, tronDevnet: null },
    });
  const usdt = nilePage(onNile(chosen()));
  t.false(isHidden(usdt, 'fee-hint'));
  t.regex(usdt, /id="fee-hint">The network fee is paid in TRX, not USDT: sending USDT on Tron can burn several TRX/);
  // Each asset button carries its own line, for checkout.js to show when the payer switches.
  t.regex(usdt, /data-asset="addr-usdc"[^>]*data-fee-hint="The network fee is paid in TRX, not USDT/);
  const trx = tronPage(onTron(chosen(), 'trx'));
  t.true(isHidden(trx, 'fee-hint'));
  t.regex(trx, /data-asset="addr-usdc"[^>]*data-fee-hint=""/);
});

test('a token chosen on the local Tron, which charges no fee: the page says so rather than that it burns TRX', (t) => {
  const usdt = tronPage(onTron(chosen(), 'usdt'));
  t.false(isHidden(usdt, 'fee-hint'));
  t.regex(usdt, /id="fee-hint">The local Tron charges no network fee: a wallet holding only USDT can send it\./);
  t.notRegex(usdt, /burn/);
});

test('without JavaScript the asset buttons, the promotion code and the cancel post plain forms to the page, what only the script works is marked for hiding, and the payer is told to reload to see the status; a session that is over has neither', (t) => {
  const open = render(sessionFixture({ cancelUrl: 'https://shop.example/cart', allowPromotionCodes: true })).html;
  t.regex(
    open,
    /<form method="post" action="\/checkout\/[^"]+"><div id="assets" class="assets" role="group" aria-labelledby="pay-title">/,
  );
  t.regex(open, /<button type="submit" name="assetId" value="addr-usdc" class="asset" data-asset="addr-usdc"/);
  t.regex(
    open,
    /<form id="promo" class="promo" method="post" action="\/checkout\/[^"]+"><input type="hidden" name="action" value="promotion-code">/,
  );
  t.regex(
    open,
    /<noscript><details class="cancel-confirm"><summary>Cancel payment<\/summary><form method="post" action="\/checkout\/[^"]+"><p>You will return to shop\.example\. Do not send a payment after canceling\.<\/p><button type="submit" name="action" value="cancel" class="danger">Cancel payment<\/button>/,
  );
  // Only the script works these: no-script.css (linked in <noscript>) hides them.
  t.regex(open, /<noscript><link rel="stylesheet" href="\/assets\/no-script\.css\?v=\w+"><\/noscript>/);
  t.regex(open, /<button type="button" id="cancel" class="link-button needs-script">/);
  t.is(open.match(/class="copy secondary needs-script"/g)?.length, 2);
  t.is(open.match(/class="wallet-family needs-script"/g)?.length, 3);
  t.regex(
    open,
    /<noscript><p class="muted" id="reload-hint">This page does not update by itself without JavaScript, so <a href="\/checkout\/[^"]+">reload it<\/a>/,
  );
  // Nothing chosen yet: no request drawn.
  t.true(isHidden(open, 'reveal'));
  const over = render(chosen({ status: 'expired' })).html;
  t.notRegex(over, /reload-hint|name="assetId"|name="action"/);
});

test('the status says the page updates by itself only where the script runs: without it that clause is hidden, the reload hint said instead', (t) => {
  const html = render(chosen()).html;
  t.regex(
    html,
    /<span id="status-detail">Send the amount below<span class="needs-script">; this page updates by itself<\/span>\.<\/span>/,
  );
});

test('one asset offered and none chosen: without the script its button says it is the step to the request; chosen, or among several, it does not', (t) => {
  const one = sessionFixture();
  const single = render({ ...one, addresses: one.addresses.slice(0, 1) }).html;
  t.regex(single, /<span class="asset-step no-script-only">Show the amount and address to pay<\/span>/);
  t.notRegex(render(chosen()).html, /asset-step/);
  t.notRegex(
    render({ ...one, addresses: [one.addresses[0]!, { ...one.addresses[0]!, id: 'addr-2' }] }).html,
    /asset-step/,
  );
});

test('the request chosen is drawn by the server, so it can be paid without JavaScript: amount, asset, network, address, QR, wallet link and the time left', (t) => {
  const session = chosen();
  const status = payerStatus(session, names, NOW, undefined, pay);
  const html = renderCheckoutPage({ session, org: null, status, names, products: new Map(), qrSvg: '<svg>qr</svg>' });
  t.false(isHidden(html, 'reveal'));
  t.is(text(html, 'due'), '3');
  t.is(text(html, 'due-copy'), '3');
  t.is(text(html, 'symbol'), 'USDC');
  t.is(text(html, 'network'), 'Weir Testnet');
  t.is(text(html, 'address'), status.payment!.address);
  t.regex(html, /<div id="qr" role="img" aria-label="QR code of the payment request"><svg>qr<\/svg><\/div>/);
  t.true(
    html.includes(`id="open-wallet" class="button" href="${status.payment!.paymentUri.replaceAll('&', '&amp;')}"`),
  );
  // The fixture expires at 01:00, half an hour after NOW: the time left in words, the clock time beside it without the script.
  t.is(text(html, 'expires'), '30 min');
  t.regex(html, /<noscript> \(at 01:00 UTC\)<\/noscript>/);
  t.notRegex(html, /id="reference"/, 'no reference on an EVM network');
  // Without a QR (the preview, or a page drawn without one) the reveal waits for the script, as before.
  t.true(isHidden(render(session).html, 'reveal'));
});

test('a Solana request drawn by the server shows its reference, which the payment must carry', (t) => {
  const session = chosen();
  const solana: CheckoutSession = {
    ...session,
    addresses: session.addresses.map((a, i) =>
      i === 0 ? { ...a, network: 'solana-local', asset: { ...a.asset, chainId: SOLANA_LOCALNET_CHAIN_ID } } : a,
    ),
  };
  const status = payerStatus(solana, names, NOW, undefined, pay);
  const html = renderCheckoutPage({
    session: solana,
    org: null,
    status,
    names,
    products: new Map(),
    qrSvg: '<svg></svg>',
  });
  t.is(text(html, 'reference'), solana.addresses[0]!.paymentAddress);
});

test('a choice the form posted and the session refused is said in the status, marked data-problem for the script to keep through its polls; a page with no refusal has no mark', (t) => {
  const session = sessionFixture();
  const status = payerStatus(session, names, NOW, undefined, pay);
  const page = (problem: { title: string; detail: string } | null) =>
    renderCheckoutPage({ session, org: null, status, names, products: new Map(), problem });
  const html = page({
    title: 'This asset cannot be used',
    detail: 'It is not offered by this checkout: choose one of those below.',
  });
  t.is(text(html, 'status-title'), 'This asset cannot be used');
  t.is(text(html, 'status-detail'), 'It is not offered by this checkout: choose one of those below.');
  t.regex(html, /<div id="status" [^>]*data-state="[^"]+" data-problem>/);
  t.notRegex(page(null), /data-problem/);
});

test('a promotion code the form posted and the session refused stays in its input, escaped; with none refused the input is empty', (t) => {
  const session = sessionFixture({ allowPromotionCodes: true });
  const status = payerStatus(session, names, NOW, undefined, pay);
  const page = (problem: { title: string; detail: string; code?: string } | null) =>
    renderCheckoutPage({ session, org: null, status, names, products: new Map(), problem });
  const refused = page({ title: 'This promotion code cannot be used', detail: 'No such code', code: 'LAUNCH"><b>x' });
  t.regex(
    refused,
    /<input id="promo-code" name="code" autocomplete="off" maxlength="100" value="LAUNCH&quot;&gt;&lt;b&gt;x">/,
  );
  t.false(refused.includes('<b>x'));
  t.regex(page(null), /<input id="promo-code" name="code" autocomplete="off" maxlength="100">/);
  t.regex(
    page({ title: 'This asset cannot be used', detail: 'Not offered' }),
    /<input id="promo-code" name="code" autocomplete="off" maxlength="100">/,
  );
});

test('an expired or canceled checkout asks for nothing: no Remaining row beside "do not send a payment"; an open one shows it', (t) => {
  t.true(isHidden(render(chosen({ status: 'expired' })).html, 'remaining-row'));
  t.true(isHidden(render(chosen({ status: 'canceled' })).html, 'remaining-row'));
  t.false(isHidden(render(chosen()).html, 'remaining-row'));
});

test('the checkout of an invoice names the invoice without a quantity; an order of products keeps its "× n"', (t) => {
  const invoiceLine: SessionLineItem = {
    ...flatWhites,
    quantity: 1,
    price: { ...flatWhites.price, product: { ...flatWhites.price.product, name: 'Invoice INV-000001' } },
  };
  const invoice = render(chosen({ invoiceId: 'inv-1', lineItems: { object: 'list', data: [invoiceLine] } })).html;
  t.regex(invoice, /<span class="item-name">Invoice INV-000001<\/span>/);
  t.notRegex(invoice, /×/);
  t.regex(render(chosen()).html, /<span class="item-name">Flat white × 2<\/span>/);
});

test("the merchant's preferred network's assets come first and say so in words, with and without the script, and none is chosen for the payer", (t) => {
  const base = sessionFixture({ lineItems: { object: 'list', data: [flatWhites] } });
  const usdc = base.addresses[0]!;
  const other = (id: string, chainId: number, network: string) => ({
    ...usdc,
    id,
    network,
    asset: { ...usdc.asset, id: `${network}:usdc`, chainId },
  });
  // The preferred network's asset sits last in the session, between two others.
  const addresses = [usdc, other('addr-polygon', 137, 'polygon'), other('addr-base', 8453, 'base')];
  const at = (preferredChainId: number | null) =>
    render({ ...base, addresses, paymentSetting: { ...base.paymentSetting, preferredChainId } }).html;
  const order = (html: string) => [...html.matchAll(/data-asset="([^"]+)"/g)].map((m) => m[1]);
  const buttons = (html: string) => html.match(/<button[^>]*class="asset"[\s\S]*?<\/button>/g) ?? [];

  const preferred = at(8453);
  t.deepEqual(order(preferred), ['addr-base', 'addr-usdc', 'addr-polygon'], 'the rest keep their order');
  const [first, ...rest] = buttons(preferred);
  // Inside the button, so its accessible name says it; not a colour alone.
  t.regex(first ?? '', /<span class="asset-preferred">Preferred network<\/span>/);
  for (const button of rest) t.notRegex(button, /Preferred/);
  // The page's form posts the choice: the order is the server's, so the page without the script shows it too.
  t.regex(
    preferred,
    /<form method="post" action="\/checkout\/[^"]+"><div id="assets"[^>]*>\s*<button type="submit" name="assetId" value="addr-base"/,
  );
  t.notRegex(preferred, /aria-pressed="true"/, 'nothing is chosen by loading the page');

  for (const html of [at(null), at(1)]) {
    t.deepEqual(order(html), ['addr-usdc', 'addr-polygon', 'addr-base'], 'no preferred network offered: as created');
    t.notRegex(html, /Preferred network/);
  }
});

test('late money is told by the one rule the sessions list and Home use: a canceled session paid only dust (18-decimal, under 10^-8) tells the payer it arrived, for less than the smallest amount shown, and whom to contact; one with nothing late, no contact', (t) => {
  const org: Organization = {
    ...evolveOrganization(null, {
      type: 'OrganizationCreated',
      data: { id: 'org-1', environment: 'test', name: 'Corner Coffee', at: '2026-01-01T00:00:00.000Z' },
    })!,
    supportEmail: 'help@corner.example',
  };
  const renderWith = (session: CheckoutSession) => {
    const status = payerStatus(session, names, NOW, undefined, pay, org);
    return { status, html: renderCheckoutPage({ session, org, status, names, products: new Map() }) };
  };
  const dust = { ...fineGrainedPayment('0', 'confirmed'), amountRaw: '1', late: true };
  const { status, html } = renderWith(chosen({ status: 'canceled', payments: [dust] }));
  t.like(status, { state: 'canceled', title: 'Payment received after closing' });
  t.is(
    status.detail,
    'Your payment of less than 0.00000001 USDC was received after this checkout was canceled. The business has been notified and will settle it with you, by a refund or a credit. Do not send anything more to this address.',
  );
  t.is(text(html, 'late-contact'), 'Questions about this payment: contact Corner Coffee at ');
  t.regex(html, /id="late-contact">[\s\S]*href="mailto:help@corner\.example"/);
  t.is(text(renderWith(chosen({ status: 'canceled' })).html, 'late-contact'), undefined);
});

test('a closed checkout that money reached after it closed lists what was paid before the close apart from the late money, never adding the late money into Paid; dust reads as less than the smallest amount shown, and an open checkout keeps one Paid row', (t) => {
  const onTime = payment('100000000', 'confirmed');
  const late = { ...payment('300000000', 'confirmed'), transferId: 't-late', late: true };
  const label = (html: string, id: string) => new RegExp(`<dt>([^<]*)</dt><dd><span id="${id}">`).exec(html)?.[1];
  const expired = render(chosen({ status: 'expired', amountReceived: '400000000', payments: [onTime, late] })).html;
  t.is(label(expired, 'paid'), 'Paid before it expired');
  t.is(text(expired, 'paid'), '1.00');
  t.is(label(expired, 'paid-late'), 'Received after closing');
  t.is(text(expired, 'paid-late'), '3.00');
  t.notRegex(expired, />4\.00</, 'the late money is not added to what was paid');

  // Sent before the cancel and confirmed after it: said as the status says it.
  const confirmedAfter = render(
    chosen({ status: 'canceled', amountReceived: '300000000', payments: [{ ...late, seenBeforeClose: true }] }),
  ).html;
  t.is(label(confirmedAfter, 'paid'), 'Paid before it was canceled');
  t.is(text(confirmedAfter, 'paid'), '0.00');
  t.is(label(confirmedAfter, 'paid-late'), 'Confirmed after closing');

  const dust = { ...fineGrainedPayment('0', 'confirmed'), amountRaw: '1', late: true };
  t.is(text(render(chosen({ status: 'canceled', payments: [dust] })).html, 'paid-late'), 'less than 0.00000001');
  // Dust sent before the cancel is told so too, by its payment, though it reads 0 at the 10^8 scale.
  const dustBefore = render(chosen({ status: 'canceled', payments: [{ ...dust, seenBeforeClose: true }] })).html;
  t.is(label(dustBefore, 'paid-late'), 'Confirmed after closing');
  t.is(text(dustBefore, 'paid-late'), 'less than 0.00000001');

  const open = render(chosen({ amountReceived: '100000000', payments: [onTime] })).html;
  t.is(label(open, 'paid'), 'Paid');
  t.is(text(open, 'paid'), '1.00');
  t.false(open.includes('id="paid-late"'));
  // Closed with nothing late: one Paid row, as before.
  t.is(label(render(chosen({ status: 'expired' })).html, 'paid'), 'Paid');
});

test("an 18-decimal checkout's Paid rows add up to what it received to the 10^-8 unit: the late row carries the unit both parts' fractions make, and is still told as sent before the close when it was", (t) => {
  // 1.000000005 in time, 2.000000005 sent before the cancel and confirmed after it: 3.00000001 received.
  const halfOver = (amount: string) => {
    const paid = fineGrainedPayment(amount, 'confirmed');
    return { ...paid, amountRaw: (BigInt(paid.amountRaw) + 5n * 10n ** 9n).toString() };
  };
  const late = { ...halfOver('200000000'), transferId: 't-late', late: true, seenBeforeClose: true as const };
  const { html } = render(
    chosen({ status: 'canceled', amountReceived: '300000001', payments: [halfOver('100000000'), late] }),
  );
  t.is(text(html, 'paid'), '1.00');
  t.is(text(html, 'paid-late'), '2.00000001');
  t.regex(html, /<dt>Confirmed after closing<\/dt><dd><span id="paid-late">/);
});

test('every script of the checkout page that reads answers through hosted-fetch.js runs after it: it is loaded once, not deferred, just before checkout.js; the wallet scripts are deferred', async (t) => {
  const session = chosen();
  const usdc = session.addresses[0]!;
  const solana = { ...usdc, id: 'addr-sol', asset: { ...usdc.asset, chainId: SOLANA_LOCALNET_CHAIN_ID } };
  const tron = { ...onTron(session, 'usdt').addresses[0]!, id: 'addr-tron' };
  const everyFamily = { ...session, addresses: [usdc, solana, tron] };
  const html = renderCheckoutPage({
    session: everyFamily,
    org: null,
    status: payerStatus(everyFamily, names, NOW, undefined, pay),
    names,
    products: new Map(),
    wallet: { networks: [TEST_NETWORK, tronLocal], devnet: null, tronDevnet: null },
  });
  const scripts = [...html.matchAll(/<script src="\/assets\/([\w-]+\.js)\?v=\w+"([^>]*)><\/script>/g)].map(
    ([, name, rest]) => ({ name: name!, deferred: / defer\b/.test(rest!) }),
  );
  t.deepEqual(
    scripts.map((s) => s.name),
    ['wallet.js', 'solana-wallet.js', 'tron-wallet.js', 'hosted-fetch.js', 'checkout.js'],
  );
  const shared = scripts.findIndex((s) => s.name === 'hosted-fetch.js');
  t.false(scripts[shared]!.deferred);
  for (const [i, script] of scripts.entries()) {
    if (i === shared) continue;
    const source = await readFile(new URL(`./assets/${script.name}`, import.meta.url), 'utf8');
    t.true(source.includes('window.weirHosted'), script.name);
    t.true(i > shared || script.deferred, `${script.name} runs after hosted-fetch.js`);
  }
  // Without checkout.js (the session over) nothing needs it.
  t.notRegex(render(chosen({ status: 'expired' })).html, /hosted-fetch/);
});

test('a paid page says it is paid, in its heading and title too, and when, with the zone of the time named (the page has no script to say it in the payer’s own)', (t) => {
  const paid = chosen({
    status: 'complete',
    paymentStatus: 'paid',
    amountReceived: '300000000',
    completedAt: '2026-01-01T16:45:09.000Z',
    payments: [payment('300000000', 'confirmed')],
  });
  const { status, html } = render(paid);
  t.like(status, { title: 'Paid', detail: 'Payment received, thank you.' });
  t.is(text(html, 'summary-title'), 'Paid to Checkout');
  t.regex(html, /<title>Paid to Checkout/);
  t.notRegex(html, />Pay Checkout</);
  t.regex(html, /Paid on <time datetime="2026-01-01T16:45:09.000Z">1 January 2026, 16:45 UTC<\/time>\./);
  t.is(text(render(chosen()).html, 'summary-title'), 'Pay Checkout', 'an open page still asks');
});

test('a free order (total 0, a 100% promotion code) completed is not said to be paid or received: the order is complete, nothing to pay', (t) => {
  const free = chosen({
    status: 'complete',
    paymentStatus: 'paid',
    amountTotal: '0',
    amountReceived: '0',
    completedAt: '2026-01-01T16:45:09.000Z',
  });
  const { status, html } = render(free);
  t.like(status, {
    state: 'paid',
    title: 'Order complete',
    detail: 'Nothing to pay: this order is complete, thank you.',
  });
  t.notRegex(html, /received|Paid on|Paid to/);
  t.is(text(html, 'summary-title'), 'Order with Checkout complete');
  t.regex(html, /Completed on <time datetime="2026-01-01T16:45:09.000Z">1 January 2026, 16:45 UTC<\/time>\./);
});
