import { randomUUID } from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import type { Rail } from '../../src/chain-ingest/rail.ts';
import { solanaLocalNetwork } from '../../src/chain-ingest/solana/networks.ts';
import { toSolanaRailNetwork } from '../../src/chain-ingest/solana/define-network.ts';
import { toTronRailNetwork } from '../../src/chain-ingest/tron/define-network.ts';
import { TRON_LOCAL_CHAIN_ID, tronLocalNetwork } from '../../src/chain-ingest/tron/networks.ts';
import { SOLANA_LOCALNET_CHAIN_ID } from '../../src/chain-ingest/solana/networks.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import { schemaValidatorOf } from '../support/response-check.ts';
import { chainPublisher, randomHash } from '../support/chain-publisher.ts';
import { createTestRail } from '../../src/chain-ingest/test-rail.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { PRODUCTS } from '../../src/projections/catalog.projection.ts';
import { MAX_PUBLIC_BODY_BYTES } from '../../src/read-api/request-body.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { ReadModelsBehindError } from '../../src/shared/errors.ts';
import { faultyReadStore } from '../support/faulty-read-store.ts';
import { assertNoticePage, pageAnswer } from '../support/notice-page.ts';
import { assertError, payLate, reveal, type Api, type ErrorBody, type Session } from './helpers.ts';

/** The hosted checkout page `/checkout/{id}` over HTTP, as the server renders it. */

const page = async (url: string) => {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`${url}: ${response.status}`);
  return response.text();
};
/** A post to a page as its forms send one without JavaScript (or a body of another `type`); a redirect is not followed. */
const postForm = (url: string, body: string, type = 'application/x-www-form-urlencoded') =>
  fetch(url, { method: 'POST', headers: { 'content-type': type }, body, redirect: 'manual' });
/** The text of the element with `id`, tags dropped and spaces collapsed. */
const textOf = (html: string, id: string): string | undefined => {
  const open = new RegExp(`<(\\w+)[^>]* id="${id}"[^>]*>`).exec(html);
  if (!open) return undefined;
  const rest = html.slice(open.index + open[0].length);
  const close = rest.indexOf(`</${open[1]}>`);
  return rest
    .slice(0, close)
    .replace(/<\/?(dt|dd|div)[^>]*>/g, ' ')
    .replace(/<[^>]+>/g, '')
    .replace(/\s+/g, ' ')
    .trim();
};
/** A checkout that takes promotion codes, and a post of its page's form (without JavaScript). */
async function promotionCheckout(t: ExecutionContext) {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const session = (
    await api.post<Session & { url: string }>('/api/v1/checkout/sessions', {
      ...sessionRequest('250000000', 1),
      allowPromotionCodes: true,
    })
  ).body;
  return { weir, api, session, post: (body: string) => postForm(session.url, body) };
}
/** A form refused as a page (400, HTML, never the API's JSON): its HTML. */
async function refusedPage(t: ExecutionContext, refused: Response, body: string): Promise<string> {
  t.is(refused.status, 400, body);
  t.regex(refused.headers.get('content-type') ?? '', /text\/html/, body);
  return refused.text();
}
/** The row of the totals whose amount has `id` (label, amount and what follows it). */
const rowOf = (html: string, id: string) => textOf(html, `${id}-row`);

async function plan(api: Api, name: string, interval: string, intervalCount: number, unitAmount = '1000000000') {
  const product = await api.post<{ defaultPrice: { id: string } }>('/api/v1/products', {
    name,
    defaultPriceData: { currency: 'usdc', unitAmount, type: 'recurring', interval, intervalCount },
  });
  if (product.status !== 200) throw new Error(JSON.stringify(product.body));
  return product.body.defaultPrice.id;
}

test('a subscription checkout says the total recurs: "10.00 USDC every month" beside the line, the total and the total due; "every 3 months" for a quarterly plan; a one-time checkout says nothing of it', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const subscribe = async (priceId: string) => {
    const created = await api.post<Session>('/api/v1/checkout/sessions', {
      mode: 'subscription',
      successUrl: 'https://shop.example/welcome',
      customerData: { email: 'subscriber@example.com' },
      lineItems: { data: [{ priceId, quantity: 1 }] },
    });
    if (created.status !== 200) throw new Error(JSON.stringify(created.body));
    return page((created.body as Session & { url: string }).url);
  };

  const monthly = await subscribe(await plan(api, 'Pro plan', 'month', 1));
  t.regex(monthly, /<span class="item-amount">10\.00 USDC <span class="recurrence">every month<\/span><\/span>/);
  t.is(textOf(monthly, 'summary-title'), 'Pay Corner Coffee');
  t.regex(
    monthly,
    /<p class="total"><span id="amount">10\.00<\/span> USDC <span class="recurrence">every month<\/span>/,
  );
  t.is(rowOf(monthly, 'total-due'), 'Total due 10.00 USDC every month');
  // What is paid and left refers to this payment only.
  t.is(rowOf(monthly, 'remaining'), 'Remaining 10.00 USDC');

  const quarterly = await subscribe(await plan(api, 'Quarterly plan', 'month', 3, '2500000000'));
  t.regex(quarterly, /<span class="item-amount">25\.00 USDC <span class="recurrence">every 3 months<\/span><\/span>/);
  t.is(rowOf(quarterly, 'total-due'), 'Total due 25.00 USDC every 3 months');

  const once = await api.post<Session & { url: string }>('/api/v1/checkout/sessions', sessionRequest());
  const oneTime = await page(once.body.url);
  t.is(rowOf(oneTime, 'total-due'), 'Total due 3.00 USDC');
  t.notRegex(oneTime, /every/);
});

test('a payment confirmed after the checkout was canceled: the page says it was received late, how much, that the business was notified and will refund or credit it, and how to reach its support; not without one, and not on a session canceled with nothing late', async (t) => {
  const weir = await startTestWeir(t);
  const withSupport = await createMerchant(weir.url, 'Corner Coffee');
  const put = await withSupport.api.put('/api/v1/organization', {
    supportEmail: 'help@corner.example',
    supportPhone: '+44 20 7946 0000',
    supportUrl: 'https://corner.example/help',
  });
  t.is(put.status, 200, JSON.stringify(put.body));
  const without = await createMerchant(weir.url, 'Quiet Shop');

  const canceledThenPaid = async (api: Api) => {
    const session = (
      await api.post<Session & { url: string }>('/api/v1/checkout/sessions', sessionRequest('5223456700', 1))
    ).body;
    const revealed = await reveal(weir, api, session.id);
    const canceled = await apiClient(weir.url).post(`/checkout/${session.id}/cancel`, {});
    t.is(canceled.status, 200, JSON.stringify(canceled.body));
    await payLate(weir, api, session.id, revealed);
    // The poll tells the split the page shows: nothing paid before the cancel, all of it late.
    const status = (await apiClient(weir.url).get<Record<string, string>>(`/checkout/${session.id}/status`)).body;
    t.like(status, {
      amountReceived: '5223456700',
      amountReceivedFormatted: '52.234567',
      amountReceivedBeforeClose: '0',
      amountReceivedBeforeCloseFormatted: '0.00',
      amountReceivedAfterClose: '5223456700',
      amountReceivedAfterCloseFormatted: '52.234567',
    });
    const html = await page(session.url);
    t.is(textOf(html, 'paid'), status.amountReceivedBeforeCloseFormatted);
    t.is(textOf(html, 'paid-late'), status.amountReceivedAfterCloseFormatted);
    return html;
  };

  const html = await canceledThenPaid(withSupport.api);
  t.is(textOf(html, 'status-title'), 'Payment received after closing');
  t.is(
    textOf(html, 'status-detail'),
    'Your payment of 52.234567 USDC was received after this checkout was canceled. The business has been notified and will settle it with you, by a refund or a credit. Do not send anything more to this address.',
  );
  t.is(
    textOf(html, 'late-contact'),
    'Questions about this payment: contact Corner Coffee at help@corner.example · +44 20 7946 0000 · support page.',
  );
  t.regex(
    html,
    /id="late-contact">[\s\S]*href="mailto:help@corner\.example"[\s\S]*href="https:\/\/corner\.example\/help"/,
  );

  const quiet = await canceledThenPaid(without.api);
  t.is(textOf(quiet, 'status-title'), 'Payment received after closing');
  t.is(textOf(quiet, 'late-contact'), undefined, 'no contact to show');

  const nothingLate = (await without.api.post<Session & { url: string }>('/api/v1/checkout/sessions', sessionRequest()))
    .body;
  t.is((await apiClient(weir.url).post(`/checkout/${nothingLate.id}/cancel`, {})).status, 200);
  const plain = await page(nothingLate.url);
  t.is(textOf(plain, 'status-title'), 'Canceled');
  t.is(textOf(plain, 'status-detail'), 'This checkout was canceled. Do not send a payment to its address.');
});

test('an overpaid checkout tells the payer to contact the business about the excess at the contact it set, on the page and in its status', async (t) => {
  const weir = await startTestWeir(t);
  const shop = await createMerchant(weir.url, 'Corner Coffee');
  t.is((await shop.api.put('/api/v1/organization', { supportEmail: 'help@corner.example' })).status, 200);
  const session = (
    await shop.api.post<Session & { url: string }>('/api/v1/checkout/sessions', sessionRequest('100000000', 1))
  ).body;
  const revealed = await reveal(weir, shop.api, session.id);
  const chain = chainPublisher(weir.bus);
  const blockHash = randomHash();
  await chain.transfer({
    to: revealed.address,
    amount: (BigInt(revealed.amountDueRaw) * 2n).toString(),
    blockNumber: 9001,
    blockHash,
  });
  await chain.final(9001, blockHash);
  await eventually(async () => {
    const s = (await shop.api.get<Session>(`/api/v1/checkout/sessions/${session.id}`)).body;
    return s.status === 'complete' ? s : undefined;
  }, 'the session to complete');
  const detail =
    'Payment received, thank you. You sent 1.00 USDC more than was due; contact Corner Coffee at help@corner.example about it.';
  t.is(textOf(await page(session.url), 'status-detail'), detail);
  // The page script shows what the status says once the session is over.
  t.is((await apiClient(weir.url).get<{ detail: string }>(`/checkout/${session.id}/status`)).body.detail, detail);
});

// The local Tron and Solana networks, offered by a rail of the test's own: the page is rendered, nothing is paid.
const TRON_LOCAL = toTronRailNetwork(
  tronLocalNetwork({ usdt: 'TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL', usdc: 'TBDCyrZ1hT1PDDFf2yRABwPrFica5qqPUX' }),
);
const SOLANA_LOCAL = toSolanaRailNetwork(
  solanaLocalNetwork({
    usdc: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
    usdt: 'Es9vMFrzaCERmJfrF4H5twhTbrhXJWJLdBiTNrDRUsZ8',
  }),
);
const otherFamilies: Rail = {
  name: 'tron+solana (test)',
  networks: (environment) => (environment === 'test' ? [TRON_LOCAL, SOLANA_LOCAL] : []),
  unpayableAddress: () => null,
  depositAddress: ({ network }) =>
    network.kind === 'tron' ? 'TWd4WrZ9wn84f5x1hZhL4DHvk738ns5jwb' : '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM',
  paymentRequest: ({ address, amountDue }) => ({
    uri: `${address.network}:${address.paymentAddress}?amount=${amountDue}`,
    payee: address.paymentAddress,
  }),
};

test('the wallet buttons shown are those of the chosen network only: TronLink for a Tron asset, "Connect wallet" for an EVM one, the Solana wallet for a Solana one; each asset says its family for the page script', async (t) => {
  const weir = await startTestWeir(t, { testRail: false }, { extraRails: [createTestRail(), otherFamilies] });
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  for (const [chainId, address] of [
    [TRON_LOCAL_CHAIN_ID, 'TWd4WrZ9wn84f5x1hZhL4DHvk738ns5jwb'],
    [SOLANA_LOCALNET_CHAIN_ID, '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM'],
  ] as const) {
    const added = await api.post('/api/v1/organization/withdrawal-addresses', { chainId, address, name: 'wallet' });
    t.is(added.status, 200, JSON.stringify(added.body));
  }
  type Addressed = { id: string; url: string; addresses: { id: string; network: string; asset: { id: string } }[] };
  const session = (await api.post<Addressed>('/api/v1/checkout/sessions', sessionRequest())).body;
  const networkOf = (network: string) => session.addresses.find((a) => a.network === network)!;
  t.deepEqual(session.addresses.map((a) => a.network).sort(), ['solana-localnet', 'tron-local', 'weir-testnet']);

  /** Which wallet families the page shows (its section not hidden) once the asset on `network` is chosen. */
  const shownAfterChoosing = async (network: string) => {
    const chosen = await apiClient(weir.url).post(`/checkout/${session.id}/payment-method`, {
      assetId: networkOf(network).asset.id,
    });
    t.is(chosen.status, 200, JSON.stringify(chosen.body));
    const html = await page(session.url);
    const families = [
      ...html.matchAll(/<div class="wallet-family needs-script" data-wallet-family="(\w+)"( hidden)?>/g),
    ];
    t.is(families.length, 3, 'one section per family, for the script to switch between');
    return { html, shown: families.filter((f) => !f[2]).map((f) => f[1]) };
  };
  const visible = (html: string, family: string) =>
    html.split(`<div class="wallet-family needs-script" data-wallet-family="${family}">`)[1] ?? '';

  const tron = await shownAfterChoosing('tron-local');
  t.deepEqual(tron.shown, ['tron']);
  t.regex(visible(tron.html, 'tron'), /^\s*<div id="tron-wallet-actions"[\s\S]*Pay with TronLink/);
  t.regex(tron.html, /data-wallet-family="evm" hidden>\s*<div id="wallet-actions"[\s\S]*Connect wallet/);
  t.regex(tron.html, /data-wallet-family="solana" hidden>\s*<div id="solana-wallet-actions"/);

  const evm = await shownAfterChoosing('weir-testnet');
  t.deepEqual(evm.shown, ['evm']);
  t.regex(visible(evm.html, 'evm'), /^\s*<div id="wallet-actions"[\s\S]*Connect wallet/);

  const solana = await shownAfterChoosing('solana-localnet');
  t.deepEqual(solana.shown, ['solana']);
  t.regex(visible(solana.html, 'solana'), /^\s*<div id="solana-wallet-actions"[\s\S]*Pay with a Solana wallet/);

  // The asset buttons carry their family: checkout.js shows that family's section when the payer switches.
  for (const [network, family] of [
    ['weir-testnet', 'evm'],
    ['tron-local', 'tron'],
    ['solana-localnet', 'solana'],
  ] as const)
    t.regex(
      solana.html,
      new RegExp(`data-asset="${networkOf(network).id}" aria-pressed="\\w+" data-family="${family}"`),
    );
});

test('without JavaScript the asset buttons post a form: the choice is recorded and the page draws the request (amount, address, QR); a refused one is said on the page; JSON, an empty choice and an unknown session are refused', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const session = (
    await api.post<Session & { url: string }>('/api/v1/checkout/sessions', sessionRequest('250000000', 1))
  ).body;
  const before = await page(session.url);
  t.regex(before, new RegExp(`<form method="post" action="/checkout/${session.id}"><div id="assets"`));
  t.regex(before, /id="reveal"[^>]* hidden/);

  const chosen = await postForm(session.url, 'assetId=weir-testnet%3Ausdc');
  t.is(chosen.status, 303);
  t.is(new URL(chosen.headers.get('location') ?? '', session.url).pathname, `/checkout/${session.id}`);
  t.is(chosen.headers.get('content-security-policy')?.includes("script-src 'self'"), true, 'the page headers');
  const after = await page(session.url);
  t.notRegex(after, /id="reveal"[^>]* hidden/);
  t.is(textOf(after, 'due'), '2.5');
  t.is(textOf(after, 'symbol'), 'USDC');
  t.is(textOf(after, 'address')?.toLowerCase(), session.addresses[0]!.paymentAddress.toLowerCase());
  t.regex(after, /<div id="qr"[^>]*><svg[^>]*>/);
  t.regex(after, /id="open-wallet" class="button" href="ethereum:/);
  t.is(
    (
      await api.get<{ paymentIntent: { paymentMethod: { id: string } | null } }>(
        `/api/v1/checkout/sessions/${session.id}`,
      )
    ).body.paymentIntent.paymentMethod?.id,
    session.addresses[0]!.id,
  );

  const refused = await postForm(session.url, 'assetId=nowhere%3Acoin');
  t.is(refused.status, 400);
  t.regex(refused.headers.get('content-type') ?? '', /text\/html/);
  const refusedHtml = await refused.text();
  t.is(textOf(refusedHtml, 'status-title'), 'This asset cannot be used');
  t.is(textOf(refusedHtml, 'status-detail'), 'It is not offered by this checkout: choose one of those below.');

  // Refused as a page, never the API's JSON: whoever posts to the page is shown the page.
  const json = await postForm(session.url, JSON.stringify({ assetId: 'weir-testnet:usdc' }), 'application/json');
  t.is(json.status, 400);
  t.regex(json.headers.get('content-type') ?? '', /text\/html/);
  const jsonHtml = await json.text();
  t.is(textOf(jsonHtml, 'status-title'), 'This form cannot be used');
  t.is(textOf(jsonHtml, 'status-detail'), 'It was not sent as a web form: use the buttons below.');
  const empty = await postForm(session.url, 'assetId=');
  t.is(empty.status, 400);
  t.regex(empty.headers.get('content-type') ?? '', /text\/html/);
  const emptyHtml = await empty.text();
  t.is(textOf(emptyHtml, 'status-title'), 'This asset cannot be used');
  t.is(textOf(emptyHtml, 'status-detail'), 'The asset must not be empty.');
  const missing = await postForm(`${weir.url}/checkout/${crypto.randomUUID()}`, 'assetId=weir-testnet%3Ausdc');
  t.is(missing.status, 404);
  t.regex(await missing.text(), /Checkout not found/);
});

test("without JavaScript a form none of the page's forms sends is refused by its schema, naming the field, and changes nothing: an unknown or empty action, a choice without assetId (the page again saying so); a promotion code left out, empty or too long (the page again saying so, the code kept); the document's form refuses the first, takes the others", async (t) => {
  const { weir, api, session, post } = await promotionCheckout(t);
  const head = await weir.eventStore.headPosition();

  const document = (await (await fetch(`${weir.url}/api/v1/openapi.json`)).json()) as {
    components?: unknown;
    paths: Record<string, { post: { requestBody: { content: Record<string, { schema: unknown }> } } }>;
  };
  const formSchema = document.paths['/checkout/{id}']!.post.requestBody.content['application/x-www-form-urlencoded']!;
  /** The document's word on a form: null when it takes it, else why not. */
  const documented = (body: string) =>
    schemaValidatorOf(document)(formSchema.schema)(Object.fromEntries(new URLSearchParams(body)));

  const unknownAction = [
    'This form cannot be used',
    'The action must be one of choose, email, promotion-code, cancel.',
  ];
  const noAsset = ['This asset cannot be used', 'The asset is required.'];
  for (const [body, [title, detail]] of [
    ['action=refund&assetId=weir-testnet%3Ausdc', unknownAction],
    ['action=&assetId=weir-testnet%3Ausdc', unknownAction],
    ['action=choose', noAsset],
    ['code=LAUNCH', noAsset],
    ['action=choose&assetId=', ['This asset cannot be used', 'The asset must not be empty.']],
  ] as const) {
    // A browser posted it: the page again, saying why, never the API's JSON.
    const refused = await post(body);
    t.is(refused.status, 400, body);
    t.regex(refused.headers.get('content-type') ?? '', /text\/html/, body);
    const html = await refused.text();
    t.is(textOf(html, 'status-title'), title, body);
    t.is(textOf(html, 'status-detail'), detail, body);
    t.not(documented(body), null, `the document refuses ${body}`);
  }

  const tooLong = 'X'.repeat(101);
  for (const [body, detail, kept] of [
    ['action=promotion-code', 'The promotion code is required.', ''],
    ['action=promotion-code&code=', 'The promotion code must not be empty.', ''],
    [`action=promotion-code&code=${tooLong}`, 'The promotion code must be at most 100 characters.', tooLong],
  ] as const) {
    // A code is the payer's typing: the form takes any, and the page says why it is refused.
    t.is(documented(body), null, `the document takes ${body}`);
    const refused = await post(body);
    t.is(refused.status, 400, body);
    t.regex(refused.headers.get('content-type') ?? '', /text\/html/, body);
    const html = await refused.text();
    t.is(textOf(html, 'status-title'), 'This promotion code cannot be used', body);
    t.is(textOf(html, 'status-detail'), detail, body);
    t.regex(
      html,
      new RegExp(`<input id="promo-code" name="code" [^>]*maxlength="100"${kept ? ` value="${kept}"` : ''}>`),
      body,
    );
  }

  t.is(await weir.eventStore.headPosition(), head, 'no event appended');
  const after = (
    await api.get<Session & { paymentIntent: { paymentMethod: unknown } }>(`/api/v1/checkout/sessions/${session.id}`)
  ).body;
  t.is(after.status, 'open');
  t.is(after.paymentIntent.paymentMethod, null, 'no asset chosen');
});

test('without JavaScript the promotion code and the cancel post to the page too: a code the session does not take, or none, is said on the page; the cancel sends the payer to the cancel URL; an unknown action is refused', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const session = (
    await api.post<Session & { url: string }>('/api/v1/checkout/sessions', sessionRequest('250000000', 1))
  ).body;
  const post = (body: string) => postForm(session.url, body);
  // This session takes no promotion code: the refusal is the page, in the payer's words.
  const notTaken = await post('action=promotion-code&code=LAUNCH');
  t.is(notTaken.status, 400);
  t.regex(notTaken.headers.get('content-type') ?? '', /text\/html/);
  const notTakenHtml = await notTaken.text();
  t.is(textOf(notTakenHtml, 'status-title'), 'This promotion code cannot be used');
  t.notRegex(textOf(notTakenHtml, 'status-detail') ?? '', /^code: /);
  const none = await post('action=promotion-code&code=');
  t.is(none.status, 400);
  t.is(textOf(await none.text(), 'status-detail'), 'The promotion code must not be empty.');
  const unknown = await post('action=refund');
  t.is(unknown.status, 400);
  t.regex(unknown.headers.get('content-type') ?? '', /text\/html/);
  t.is(
    textOf(await unknown.text(), 'status-detail'),
    'The action must be one of choose, email, promotion-code, cancel.',
  );

  const canceled = await post('action=cancel');
  t.is(canceled.status, 303);
  t.is(canceled.headers.get('location'), 'https://shop.example/cart');
  t.is((await api.get<Session>(`/api/v1/checkout/sessions/${session.id}`)).body.status, 'canceled');
  // Over: any form sends the payer back to the page, which says so.
  const again = await post('action=cancel');
  t.is(again.status, 303);
  t.is(new URL(again.headers.get('location') ?? '', session.url).pathname, `/checkout/${session.id}`);
});

test('without JavaScript a form naming a field twice with different values (two codes, two actions, two assets) is refused with the page again saying so, never JSON, and changes nothing; the same value twice is taken', async (t) => {
  const { weir, api, session, post } = await promotionCheckout(t);
  const head = await weir.eventStore.headPosition();
  for (const [body, what] of [
    ['action=promotion-code&code=A&code=B', 'promotion code'],
    ['action=promotion-code&action=cancel&code=A', 'action'],
    ['action=cancel&action=choose&assetId=weir-testnet%3Ausdc', 'action'],
    ['assetId=weir-testnet%3Ausdc&assetId=nowhere%3Acoin', 'asset'],
  ] as const) {
    const html = await refusedPage(t, await post(body), body);
    t.is(textOf(html, 'status-title'), 'This form cannot be used', body);
    t.is(textOf(html, 'status-detail'), `It named more than one ${what}: try again from this page.`, body);
  }
  t.is(await weir.eventStore.headPosition(), head, 'no event appended');
  t.is((await api.get<Session>(`/api/v1/checkout/sessions/${session.id}`)).body.status, 'open');

  const same = await post('assetId=weir-testnet%3Ausdc&assetId=weir-testnet%3Ausdc');
  t.is(same.status, 303);
});

test("a subscription checkout that names no customer asks the payer's email first, as a labelled form that works without JavaScript: no asset before it (the page's form and the JSON route both say the email is needed), a bad email is refused naming the email and kept in its input, nothing recorded; a good one is recorded and the assets follow", async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const product = await api.post<{ id: string }>('/api/v1/products', { name: 'Pro plan' });
  const created = await api.post<Session & { url: string }>('/api/v1/checkout/sessions', {
    mode: 'subscription',
    successUrl: 'https://shop.example/welcome',
    cancelUrl: 'https://shop.example/plans',
    lineItems: {
      data: [
        {
          priceData: { currency: 'usdc', unitAmount: '1000000000', interval: 'month', productId: product.body.id },
          quantity: 1,
        },
      ],
    },
  });
  t.is(created.status, 200, JSON.stringify(created.body));
  const session = created.body;
  const post = (body: string) => postForm(session.url, body);

  const before = await page(session.url);
  t.regex(
    before,
    new RegExp(
      `<form id="email-step" class="email-step" method="post" action="/checkout/${session.id}"><input type="hidden" name="action" value="email">`,
    ),
  );
  t.regex(before, /<label for="customer-email">Email<\/label>/);
  t.regex(
    before,
    /<input id="customer-email" name="email" type="email" autocomplete="email" required maxlength="254" value=""/,
  );
  t.notRegex(before, /id="assets"|name="assetId"|id="promo"/, 'no asset to choose before the email');
  t.is(textOf(before, 'pay-title'), 'Your email');
  t.is(
    textOf(before, 'status-detail'),
    'Give your email first: the renewal invoices of this subscription are sent to it.',
  );
  t.regex(before, /id="cancel-row"/, 'the payer may still cancel');

  const head = await weir.eventStore.headPosition();
  // An asset posted before the email (a stale or hand-made form): the page again saying the email is needed.
  const early = await post('assetId=weir-testnet%3Ausdc');
  t.is(early.status, 400);
  const earlyHtml = await early.text();
  t.is(textOf(earlyHtml, 'status-title'), 'This asset cannot be used');
  t.is(
    textOf(earlyHtml, 'status-detail'),
    'Give your email first: the renewal invoices of this subscription are sent to it.',
  );
  t.regex(earlyHtml, /id="email-step"/);
  const json = await apiClient(weir.url).post<{ code: string; message: string }>(
    `/checkout/${session.id}/payment-method`,
    { assetId: 'weir-testnet:usdc' },
  );
  t.is(json.status, 400);
  t.like(json.body, { code: 'parameter_missing' });
  // The script's route says it as the form does (the email form is the page's, with its script or without).
  t.is(json.body.message, 'Give your email first: the renewal invoices of this subscription are sent to it.');

  for (const [body, detail, kept] of [
    ['action=email', 'The email is required: renewal invoices are sent to it.', ''],
    ['action=email&email=+', 'The email is required: renewal invoices are sent to it.', ' '],
    ['action=email&email=pat', 'The email must be an email address, such as payer@example.com.', 'pat'],
    [
      'action=email&email=%3Cb%3Epat%40example',
      'The email must be an email address, such as payer@example.com.',
      '&lt;b&gt;pat@example',
    ],
  ] as const) {
    const html = await refusedPage(t, await post(body), body);
    t.is(textOf(html, 'status-title'), 'This email cannot be used', body);
    t.is(textOf(html, 'status-detail'), detail, body);
    t.is(textOf(html, 'customer-email-error'), detail, body);
    t.regex(
      html,
      new RegExp(
        `<input id="customer-email" name="email" [^>]*value="${kept}" aria-invalid="true" aria-describedby="customer-email-hint customer-email-error">`,
      ),
      body,
    );
  }
  t.is(await weir.eventStore.headPosition(), head, 'no event appended');

  const given = await post('action=email&email=pat%40example.com');
  t.is(given.status, 303);
  t.is(new URL(given.headers.get('location') ?? '', session.url).pathname, `/checkout/${session.id}`);
  const events = (await weir.eventStore.readStream(`checkout_session-${session.id}`)).map((e) => [e.type, e.data]);
  t.deepEqual(events.at(-1)?.[0], 'CustomerEmailCollected');
  t.like(events.at(-1)?.[1], { email: 'pat@example.com' });
  const read = await api.get<{ customerDetails: { email: string } }>(`/api/v1/checkout/sessions/${session.id}`);
  t.is(read.body.customerDetails.email, 'pat@example.com');

  const after = await page(session.url);
  t.notRegex(after, /id="email-step"/);
  t.regex(after, new RegExp(`<form method="post" action="/checkout/${session.id}"><div id="assets"`));
  t.is(textOf(after, 'status-detail'), 'Choose how you want to pay.');
  // Given again, the same email changes nothing; another is refused (the subscription's customer was made from the first).
  t.is((await post('action=email&email=PAT%40example.com')).status, 303);
  const other = await post('action=email&email=sam%40example.com');
  t.is(other.status, 400);
  t.is(textOf(await other.text(), 'status-detail'), 'The email for this checkout was already given.');
  const chosen = await post('assetId=weir-testnet%3Ausdc');
  t.is(chosen.status, 303);
  t.notRegex(await page(session.url), /id="reveal"[^>]* hidden/);
});

test("before a subscription checkout's email is given, the script's routes that take none (payment-method, promotion-code) say it is asked first, in the payer's words as the page's forms do", async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  await api.post('/api/v1/coupons', {
    name: 'Launch',
    percentOff: 10,
    promotionCodeData: { data: [{ code: 'LAUNCH' }] },
  });
  const priceId = await plan(api, 'Pro plan', 'month', 1);
  const session = (
    await api.post<Session>('/api/v1/checkout/sessions', {
      mode: 'subscription',
      successUrl: 'https://shop.example/welcome',
      allowPromotionCodes: true,
      lineItems: { data: [{ priceId, quantity: 1 }] },
    })
  ).body;
  const payer = apiClient(weir.url);
  for (const [path, body] of [
    ['payment-method', { assetId: 'weir-testnet:usdc' }],
    ['promotion-code', { code: 'LAUNCH' }],
  ] as const) {
    const refused = await payer.post<ErrorBody>(`/checkout/${session.id}/${path}`, body);
    t.is(refused.status, 400, path);
    t.is(refused.body.code, 'parameter_missing', path);
    t.is(
      refused.body.message,
      'Give your email first: the renewal invoices of this subscription are sent to it.',
      path,
    );
  }
});

test('a subscription checkout that names its customer (customerId or customerData.email) asks no email: its assets show at once', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const priceId = await plan(api, 'Pro plan', 'month', 1);
  const customer = (await api.post<{ id: string }>('/api/v1/customers', { email: 'c@example.com' })).body;
  for (const named of [{ customerId: customer.id }, { customerData: { email: 'subscriber@example.com' } }]) {
    const created = await api.post<Session & { url: string }>('/api/v1/checkout/sessions', {
      mode: 'subscription',
      successUrl: 'https://shop.example/welcome',
      lineItems: { data: [{ priceId, quantity: 1 }] },
      ...named,
    });
    const html = await page(created.body.url);
    t.notRegex(html, /id="email-step"/, JSON.stringify(named));
    t.regex(html, /<div id="assets"/, JSON.stringify(named));
  }
});

const CHECKOUT_BACK = (session: { id: string }) =>
  `<a id="back" href="/checkout/${session.id}">Back to the checkout</a>`;

test("a rate limit on the checkout page and its form is a 429 page with Retry-After, in the session's frame with its Test mode badge and a way back (was the API's JSON), saying to try again in 1 second as Retry-After does (was \"Wait a minute\"); the page script's JSON routes keep the JSON 429, in the page's words", async (t) => {
  const clock = createManualClock();
  const weir = await startTestWeir(t, { rateLimitHosted: { perSecond: 1, burst: 3 } }, { clock });
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const session = (await api.post<Session>('/api/v1/checkout/sessions', sessionRequest())).body;
  for (let i = 0; i < 3; i++) t.is((await fetch(session.url)).status, 200);
  const tooMany = {
    status: 429,
    heading: 'Too many requests',
    says: /<p id="notice">Too many requests came from your connection in a short time\. Try again in 1 second\.<\/p>/,
    testMode: true,
    back: CHECKOUT_BACK(session),
  };
  const page = await pageAnswer(await fetch(session.url));
  assertNoticePage(t, page, tooMany);
  t.is(page.headers.get('retry-after'), '1');
  t.regex(page.html, /<strong>Corner Coffee<\/strong>/);
  const form = await pageAnswer(await postForm(session.url, 'action=choose&assetId=x'));
  assertNoticePage(t, form, tooMany);
  t.is(form.headers.get('retry-after'), '1');
  assertNoticePage(t, await pageAnswer(await fetch(`${weir.url}/checkout/${randomUUID()}`)), {
    ...tooMany,
    testMode: false,
    back: null,
  });
  // The script's JSON 429, its message the page's words the script shows (was the limit's, for an API client).
  const payer = apiClient(weir.url);
  for (const answer of [
    await payer.get(`/checkout/${session.id}/status`),
    await payer.post(`/checkout/${session.id}/payment-method`, { assetId: 'x' }),
  ]) {
    const body = assertError(t, answer, 429, { code: 'rate_limited' });
    t.is(body.error, 'Too Many Requests');
    t.is(body.message, 'Too many requests came from your connection in a short time. Try again in 1 second.');
    t.is(answer.headers.get('retry-after'), '1');
  }
  clock.advanceBy(1000);
  t.is((await fetch(session.url)).status, 200, 'once Retry-After has passed');
});

test('a checkout form too large to read is a 413 page with a way back, the connection closed (was the API error); a JSON route keeps its JSON 413', async (t) => {
  const { weir, session, post } = await promotionCheckout(t);
  const refused = await pageAnswer(await post(`action=promotion-code&code=${'x'.repeat(MAX_PUBLIC_BODY_BYTES)}`));
  assertNoticePage(t, refused, {
    status: 413,
    heading: 'Too much to send',
    says: /What you entered is too long to send\. Go back, shorten it and try again\./,
    testMode: true,
    back: CHECKOUT_BACK(session),
  });
  t.is(refused.headers.get('connection'), 'close');
  const json = await apiClient(weir.url).post<ErrorBody>(`/checkout/${session.id}/promotion-code`, {
    code: 'x'.repeat(MAX_PUBLIC_BODY_BYTES),
  });
  t.is(json.status, 413);
  t.is(json.body.code, 'request_too_large');
  // In the words of the page's 413, which the script shows as they are.
  t.is(json.body.message, 'What you entered is too long to send. Go back, shorten it and try again.');
});

test("an unexpected error on a checkout page script's route is its JSON 500 in the page's words, logged with the error's own (was the API's words, which the script shows)", async (t) => {
  const fault: { error: Error | null } = { error: null };
  const lines: string[] = [];
  const weir = await startTestWeir(
    t,
    {},
    {
      log: (line) => lines.push(line),
      wrapReadStore: (store) => faultyReadStore(store, { get: (_name, id) => (id === broken.id ? fault.error : null) }),
    },
  );
  const broken = { id: '' };
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const session = (await api.post<Session>('/api/v1/checkout/sessions', sessionRequest())).body;
  broken.id = session.id;
  fault.error = new TypeError("Cannot read properties of undefined (reading 'addresses')");
  const answer = await fetch(`${session.url}/status`);
  t.is(answer.status, 500);
  t.deepEqual(await answer.json(), {
    statusCode: 500,
    error: 'Internal Server Error',
    message: 'Something went wrong on our side. Please try again later.',
    code: 'processing_error',
  });
  const logged = lines.map((line) => JSON.parse(line) as { event?: string; path?: string; err?: { message: string } });
  t.true(
    logged.some(
      (l) =>
        l.event === 'http.error' &&
        l.path === `/checkout/${session.id}/status` &&
        /reading 'addresses'/.test(l.err?.message ?? ''),
    ),
    'logged with its own words',
  );
});

test("a passing failure on the checkout page is a 503 page and an unexpected error a 500 page saying it was ours, logged, without its words (both were JSON); the API's 500 stays JSON", async (t) => {
  const fault: { error: Error | null } = { error: null };
  const lines: string[] = [];
  const weir = await startTestWeir(
    t,
    {},
    {
      log: (line) => lines.push(line),
      wrapReadStore: (store) => faultyReadStore(store, { get: (name) => (name === PRODUCTS ? fault.error : null) }),
    },
  );
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const session = (await api.post<Session>('/api/v1/checkout/sessions', sessionRequest())).body;
  const productId = session.lineItems.data[0]!.price.productId;

  fault.error = new ReadModelsBehindError('read models behind at position 42');
  assertNoticePage(t, await pageAnswer(await fetch(session.url)), {
    status: 503,
    heading: 'Checkout not available just now',
    says: /This checkout cannot be reached just now\. Please try again in a moment\./,
    testMode: true,
    back: CHECKOUT_BACK(session),
  });

  fault.error = new TypeError("Cannot read properties of undefined (reading 'images')");
  const failed = await pageAnswer(await fetch(session.url));
  assertNoticePage(t, failed, {
    status: 500,
    heading: 'Something went wrong',
    says: /Something went wrong on our side\. Please try again later\./,
    testMode: true,
    back: CHECKOUT_BACK(session),
  });
  t.notRegex(failed.html, /images|TypeError/);
  const logged = lines.map((line) => JSON.parse(line) as { event?: string; path?: string; err?: { message: string } });
  t.true(
    logged.some(
      (l) =>
        l.event === 'http.error' &&
        l.path === `/checkout/${session.id}` &&
        /reading 'images'/.test(l.err?.message ?? ''),
    ),
    'logged as before',
  );
  const apiFailed = await api.get<ErrorBody>(`/api/v1/products/${productId}`);
  t.is(apiFailed.status, 500);
  t.is(apiFailed.body.code, 'processing_error');
});
