import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import test from 'ava';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { assertNoticePage, pageAnswer } from '../support/notice-page.ts';
import { assertError, logLength, teaLink, type ErrorBody, type Session } from './helpers.ts';

/**
 * A body a hosted page cannot read (compressed, of another type, malformed) used to get the API's JSON
 * 415 or 400; a payer's browser now gets a page in the notice frame saying so, with the same status.
 */

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const GZIPPED_FORM = { ...FORM, 'content-encoding': 'gzip' };

const send = (url: string, method: string, headers: Record<string, string>, body: string | Buffer) =>
  fetch(url, { method, headers, body, redirect: 'manual' });

test('a compressed form posted to a payment link is a 415 page in the link’s frame with a way back to its form (was the API’s JSON 415); nothing is written', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const link = await teaLink(api);
  const before = await logLength(weir);
  const answer = await pageAnswer(await send(link.url, 'POST', GZIPPED_FORM, gzipSync('name=Ada')));
  assertNoticePage(t, answer, {
    status: 415,
    heading: 'Your answers could not be read',
    says: /<p id="notice">They were not sent the way this page sends its form\. Go back to the form and press the button again\.<\/p>/,
    testMode: true,
    back: `<a id="back" href="/pay/${link.id}">Back to the payment page</a>`,
  });
  t.regex(answer.html, /<strong>Corner Coffee<\/strong>/);
  t.notRegex(answer.html, /gzip|Content-Encoding|compressed|unsupported/i);
  t.is(await logLength(weir), before, 'no session opened');
});

test('a compressed form posted to the checkout page is a 415 page in the session’s frame with a way back (was the API’s JSON 415); a body the page does not read (malformed JSON, another type) on a method it does not take is a 400 page; nothing is written', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const session = (await api.post<Session & { url: string }>('/api/v1/checkout/sessions', sessionRequest())).body;
  const before = await logLength(weir);
  const notRead = {
    heading: 'What was sent could not be read',
    says: /<p id="notice">It was not sent the way this page sends it\. Go back to the page and try again from there\.<\/p>/,
    testMode: true,
    back: `<a id="back" href="/checkout/${session.id}">Back to the checkout</a>`,
  };
  const compressed = await pageAnswer(
    await send(session.url, 'POST', GZIPPED_FORM, gzipSync(`assetId=${encodeURIComponent('weir-testnet:usdc')}`)),
  );
  assertNoticePage(t, compressed, { ...notRead, status: 415 });
  t.regex(compressed.html, /<strong>Corner Coffee<\/strong>/);
  t.notRegex(compressed.html, /gzip|Content-Encoding|compressed|unsupported/i);
  for (const [headers, body] of [
    [{ 'content-type': 'application/json' }, '{not json'],
    [{ 'content-type': 'text/plain' }, 'assetId=x'],
  ] as const) {
    const refused = await pageAnswer(await send(session.url, 'PUT', headers, body));
    assertNoticePage(t, refused, { ...notRead, status: 400 });
    t.notRegex(refused.html, /JSON|content.type|invalid_/i);
  }
  t.is(await logLength(weir), before, 'no choice recorded');
});

test('a body an invoice page cannot read is a 400 or 415 page, not the API’s JSON', async (t) => {
  const weir = await startTestWeir(t);
  const url = `${weir.url}/invoices/${randomUUID()}`;
  const notRead = {
    heading: 'What was sent could not be read',
    says: /It was not sent the way this page sends it\./,
    testMode: false,
    back: null,
  };
  assertNoticePage(t, await pageAnswer(await send(url, 'POST', FORM, 'a=b')), { ...notRead, status: 400 });
  assertNoticePage(t, await pageAnswer(await send(`${url}/pay`, 'POST', GZIPPED_FORM, gzipSync('a=b'))), {
    ...notRead,
    status: 415,
  });
});

test('the API and the page scripts’ JSON routes keep their JSON 415 for a compressed body', async (t) => {
  const weir = await startTestWeir(t);
  const { testSecretKey, api } = await createMerchant(weir.url);
  const session = (await api.post<Session>('/api/v1/checkout/sessions', sessionRequest())).body;
  const json = { 'content-type': 'application/json', 'content-encoding': 'gzip' };
  for (const [path, headers] of [
    ['/api/v1/customers', { ...json, authorization: `Bearer ${testSecretKey}` }],
    [`/checkout/${session.id}/payment-method`, json],
  ] as const) {
    const response = await send(`${weir.url}${path}`, 'POST', headers, gzipSync('{"assetId":"x"}'));
    t.regex(response.headers.get('content-type') ?? '', /^application\/json/, path);
    const body = (await response.json()) as ErrorBody;
    assertError(t, { status: response.status, body, headers: response.headers }, 415, {
      code: 'unsupported_content_encoding',
    });
  }
});
