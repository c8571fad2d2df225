import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import test from 'ava';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { assertNoticePage, pageAnswer } from '../support/notice-page.ts';
import { assertError, hourInvoice, logLength, teaLink, type ErrorBody, type Session } from './helpers.ts';

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

test('a compressed form posted to the checkout page is a 415 page in the session’s frame with a way back (was the API’s JSON 415); a body (malformed JSON, another type) on a method the page does not take is its 405 page with Allow, the body unread (was a 400 page); nothing is written', async (t) => {
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
    assertNoticePage(t, refused, {
      status: 405,
      heading: 'This page cannot be used this way',
      says: /only opens as a link in your browser/,
      testMode: true,
      back: notRead.back,
    });
    t.is(refused.headers.get('allow')?.split(', ').sort().join(', '), 'GET, HEAD, POST');
    t.notRegex(refused.html, /JSON|content.type|invalid_/i);
  }
  t.is(await logLength(weir), before, 'no choice recorded');
});

test('a POST or PUT to an invoice page (which takes neither) is its 405 page with Allow whatever its body, compressed or malformed, not the 415 or 400 “could not be read” page: the body is not read', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const invoiceId = await hourInvoice(t, api);
  const before = await logLength(weir);
  const notThisWay = {
    status: 405,
    heading: 'This page cannot be used this way',
    says: /only opens as a link in your browser/,
  };
  for (const [id, back] of [
    [invoiceId, `<a id="back" href="/invoices/${invoiceId}">Back to the invoice</a>`],
    [randomUUID(), null],
  ] as const) {
    for (const path of [`/invoices/${id}`, `/invoices/${id}/pay`, `/invoices/${id}/pdf`]) {
      for (const [method, headers, body] of [
        ['POST', GZIPPED_FORM, gzipSync('a=b')],
        ['POST', FORM, 'a=b'],
        ['PUT', { 'content-type': 'application/json' }, '{not json'],
        ['PATCH', { 'content-type': 'text/plain' }, 'a=b'],
      ] as const) {
        const answer = await pageAnswer(await send(`${weir.url}${path}`, method, headers, body));
        assertNoticePage(t, answer, { ...notThisWay, testMode: back !== null, back });
        t.is(answer.headers.get('allow')?.split(', ').sort().join(', '), 'GET, HEAD', `${method} ${path}`);
      }
    }
  }
  t.is(await logLength(weir), before, 'nothing written');
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

test('a page script’s JSON route answers a method it does not take with its JSON 405 and Allow whatever the body (was the 400 or 415 of a body it never reads)', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const session = (await api.post<Session>('/api/v1/checkout/sessions', sessionRequest())).body;
  for (const [headers, body] of [
    [{ 'content-type': 'application/json' }, '{not json'],
    [{ 'content-type': 'application/json', 'content-encoding': 'gzip' }, gzipSync('{"assetId":"x"}')],
  ] as const) {
    const response = await send(`${weir.url}/checkout/${session.id}/payment-method`, 'PUT', headers, body);
    assertError(
      t,
      { status: response.status, body: (await response.json()) as ErrorBody, headers: response.headers },
      405,
      {
        code: 'method_not_allowed',
      },
    );
    t.is(response.headers.get('allow'), 'POST');
  }
});

test('/api/v1 answers a method a path does not take with its 405 and Allow whatever the body, unread (was the 400 or 415 of a body no route reads); nothing is written', async (t) => {
  const weir = await startTestWeir(t);
  const { testSecretKey, api } = await createMerchant(weir.url);
  const session = (await api.post<Session>('/api/v1/checkout/sessions', sessionRequest())).body;
  const key = { authorization: `Bearer ${testSecretKey}` };
  const before = await logLength(weir);
  const bodies = [
    [{ 'content-type': 'application/json' }, '{not json'],
    [{ 'content-type': 'text/plain' }, 'plain words'],
    [{ 'content-type': 'application/json', 'content-encoding': 'gzip' }, gzipSync('{"email":"a@b.example"}')],
  ] as const;
  for (const [method, path, allowed] of [
    ['PUT', '/api/v1/customers', 'GET, HEAD, POST'],
    ['POST', `/api/v1/checkout/sessions/${session.id}`, 'GET, HEAD'],
  ] as const) {
    for (const [headers, body] of bodies) {
      const response = await send(`${weir.url}${path}`, method, { ...key, ...headers }, body);
      const answer = { status: response.status, body: (await response.json()) as ErrorBody, headers: response.headers };
      assertError(t, answer, 405, { code: 'method_not_allowed' });
      t.is(response.headers.get('allow')?.split(', ').sort().join(', '), allowed, `${method} ${path}`);
    }
  }
  t.is(await logLength(weir), before, 'nothing written');
});
