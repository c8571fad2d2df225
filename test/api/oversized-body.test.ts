import test, { type ExecutionContext } from 'ava';
import { rawConnection, type RawExchange } from '../support/raw-http.ts';
import { createMerchant, startTestWeir } from '../support/weir-harness.ts';
import { logLength, teaLink, type ErrorBody, type Page } from './helpers.ts';

/**
 * An oversized body used to get a 400 on a kept-alive connection whose rest the server never read,
 * so the next request on that socket hung until the keep-alive timeout (66 s). Now: a 413
 * `request_too_large`, `Connection: close`, and the server closes the socket.
 */

const MiB = 1024 * 1024;

const head = (method: string, path: string, headers: Record<string, string>) =>
  `${method} ${path} HTTP/1.1\r\nHost: weir.test\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;

/** A body in chunked encoding, `size` bytes in chunks of 64 KiB, with its last chunk. */
function chunked(size: number, fill = 'a'): Buffer {
  const parts: Buffer[] = [];
  for (let sent = 0; sent < size; sent += 64 * 1024) {
    const length = Math.min(64 * 1024, size - sent);
    parts.push(Buffer.from(`${length.toString(16)}\r\n${fill.repeat(length)}\r\n`));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

function assertRefusedAndClosed(t: ExecutionContext, answer: RawExchange, limit: number | 'page'): void {
  t.is(answer.statusLine, 'HTTP/1.1 413 Payload Too Large', answer.text.slice(0, 500));
  t.is(answer.headers.connection, 'close');
  if (limit === 'page') {
    // A payer's form gets the page that says so (payment-link-page.test.ts reads it), not the API's error.
    t.regex(answer.headers['content-type'] ?? '', /^text\/html/);
    t.regex(answer.body, /What you entered is too long to send/);
  } else {
    const body = JSON.parse(answer.body) as ErrorBody;
    t.like(body, { statusCode: 413, error: 'Payload Too Large', code: 'request_too_large' });
    t.regex(body.message, new RegExp(`^the request body must be at most ${limit} bytes$`));
  }
  t.true(answer.closedByServer, 'the server closes the connection after the answer');
}

test('an oversized body: a Content-Length over 1 MiB is answered at once, unread, with 413 request_too_large and the connection closed; a fresh connection works', async (t) => {
  const weir = await startTestWeir(t);
  const { api, testSecretKey } = await createMerchant(weir.url);
  const before = await logLength(weir);

  // Only the head is sent: the answer cannot wait for a body that never comes.
  for (const authorization of [`Bearer ${testSecretKey}`, 'Bearer sk_test_unknown']) {
    const connection = rawConnection(weir.port);
    t.teardown(connection.close);
    await connection.send(
      head('POST', '/api/v1/customers', {
        authorization,
        'content-type': 'application/json',
        'content-length': String(2 * MiB),
      }),
    );
    assertRefusedAndClosed(t, await connection.exchange(), MiB);
  }
  // The whole 2 MiB sent with its head: the same.
  const whole = rawConnection(weir.port);
  t.teardown(whole.close);
  const body = JSON.stringify({ email: 'a@example.com', name: 'x'.repeat(2 * MiB) });
  await whole.send(
    head('POST', '/api/v1/customers', {
      authorization: `Bearer ${testSecretKey}`,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
    }) + body,
  );
  assertRefusedAndClosed(t, await whole.exchange(), MiB);

  t.is(await logLength(weir), before, 'nothing written');
  t.is((await api.post('/api/v1/customers', { email: 'next@example.com' })).status, 200);
  t.is((await api.get<Page<unknown>>('/api/v1/customers')).body.count, 1);
});

test('an oversized body: a chunked body that passes 1 MiB gets 413 request_too_large and the connection closed', async (t) => {
  const weir = await startTestWeir(t);
  const { api, testSecretKey } = await createMerchant(weir.url);
  const before = await logLength(weir);
  const connection = rawConnection(weir.port);
  t.teardown(connection.close);
  await connection.send(
    head('POST', '/api/v1/customers', {
      authorization: `Bearer ${testSecretKey}`,
      'content-type': 'application/json',
      'transfer-encoding': 'chunked',
    }),
  );
  await connection.send(chunked(2 * MiB));
  // A second request on the same socket, which used to hang: the server has closed it instead.
  await connection.send(head('GET', '/api/v1/customers', { authorization: `Bearer ${testSecretKey}` }));
  const answer = await connection.exchange();
  assertRefusedAndClosed(t, answer, MiB);
  t.is(answer.statusLines.length, 1, 'nothing after the 413 on that socket');
  t.is(await logLength(weir), before, 'nothing written');
  t.is((await api.get('/api/v1/customers')).status, 200, 'a fresh connection works');
});

test('an oversized body: the payment link form over its 64 KiB limit gets the 413 page and the connection closed, by Content-Length and chunked', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const link = await teaLink(api, '100');
  const path = `/pay/${link.id}`;
  const before = await logLength(weir);

  const declared = rawConnection(weir.port);
  t.teardown(declared.close);
  await declared.send(
    head('POST', path, { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(65 * 1024) }),
  );
  assertRefusedAndClosed(t, await declared.exchange(), 'page');

  const streamed = rawConnection(weir.port);
  t.teardown(streamed.close);
  await streamed.send(
    head('POST', path, { 'content-type': 'application/x-www-form-urlencoded', 'transfer-encoding': 'chunked' }),
  );
  await streamed.send(chunked(256 * 1024, 'n'));
  assertRefusedAndClosed(t, await streamed.exchange(), 'page');

  t.is(await logLength(weir), before, 'no session opened');
  const form = await fetch(`${weir.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: '',
  });
  t.is(form.status, 303, 'a normal form on a fresh connection opens a session');
});

test('an oversized body: with Expect: 100-continue a refused request is answered without 100 Continue, an accepted one gets it', async (t) => {
  const weir = await startTestWeir(t);
  const { testSecretKey } = await createMerchant(weir.url);
  const expect = (headers: Record<string, string>) => ({
    'content-type': 'application/json',
    expect: '100-continue',
    ...headers,
  });

  const tooLarge = rawConnection(weir.port);
  t.teardown(tooLarge.close);
  await tooLarge.send(
    head(
      'POST',
      '/api/v1/customers',
      expect({ authorization: `Bearer ${testSecretKey}`, 'content-length': String(2 * MiB) }),
    ),
  );
  const refused = await tooLarge.exchange();
  assertRefusedAndClosed(t, refused, MiB);
  t.deepEqual(refused.statusLines, ['HTTP/1.1 413 Payload Too Large'], 'no 100 Continue for a body nobody reads');

  const noKey = rawConnection(weir.port);
  t.teardown(noKey.close);
  await noKey.send(head('POST', '/api/v1/customers', expect({ 'content-length': '30' })));
  const unauthorized = await noKey.exchange((sofar) => sofar.statusLines.length > 0);
  t.deepEqual(unauthorized.statusLines, ['HTTP/1.1 401 Unauthorized']);

  const accepted = rawConnection(weir.port);
  t.teardown(accepted.close);
  const body = JSON.stringify({ email: 'ok@example.com' });
  await accepted.send(
    head(
      'POST',
      '/api/v1/customers',
      expect({ authorization: `Bearer ${testSecretKey}`, 'content-length': String(Buffer.byteLength(body)) }),
    ),
  );
  const goOn = await accepted.exchange((sofar) => sofar.statusLines.length > 0);
  t.deepEqual(goOn.statusLines, ['HTTP/1.1 100 Continue']);
  await accepted.send(body);
  const created = await accepted.exchange((sofar) => sofar.statusLines.length > 1 && sofar.body.endsWith('}'));
  t.is(created.statusLine, 'HTTP/1.1 200 OK', created.text);
  t.is((JSON.parse(created.body) as { email: string }).email, 'ok@example.com');
});

test('a body on a method a hosted page does not take is not read: a POST to an invoice page with Expect: 100-continue gets its 405 without 100 Continue (was 100 Continue, then the body read)', async (t) => {
  const weir = await startTestWeir(t);
  for (const path of [
    '/invoices/00000000-0000-4000-8000-000000000000',
    '/invoices/00000000-0000-4000-8000-000000000000/pay',
  ]) {
    const connection = rawConnection(weir.port);
    t.teardown(connection.close);
    await connection.send(
      head('POST', path, { 'content-type': 'application/json', expect: '100-continue', 'content-length': '30' }),
    );
    const answer = await connection.exchange((sofar) => sofar.statusLines.length > 0);
    t.deepEqual(answer.statusLines, ['HTTP/1.1 405 Method Not Allowed'], path);
    t.is(answer.headers.allow?.split(', ').sort().join(', '), 'GET, HEAD', path);
  }
});
