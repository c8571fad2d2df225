import { request } from 'node:http';
import { gzipSync } from 'node:zlib';
import test from 'ava';
import { apiClient } from '../support/api-client.ts';
import { ADMIN_TOKEN, createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { assertError, hourInvoice, logLength, teaLink, type ErrorBody } from './helpers.ts';
import { assertNoticePage } from '../support/notice-page.ts';

/** One request with any method (fetch refuses TRACE), answered as status, headers and parsed body. */
function ask(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: Buffer | string,
): Promise<{ status: number; headers: Headers; body: unknown }> {
  return new Promise((resolve, reject) => {
    const length = body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) };
    const req = request(`${url}${path}`, { method, headers: { ...length, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          /* not JSON: keep the text */
        }
        const answerHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers))
          if (typeof value === 'string') answerHeaders.set(name, value);
        resolve({ status: res.statusCode ?? 0, headers: answerHeaders, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

test("unknown methods answer 405 with Allow, not 501: PROPFIND, TRACE, QUERY on /api/v1, the hosted pages, /admin, /health and /metrics; a hosted page a browser opens as a page saying so in its frame (was the JSON error), the page scripts' JSON routes and the rest as JSON", async (t) => {
  const weir = await startTestWeir(t);
  const { api, testSecretKey } = await createMerchant(weir.url);
  const session = (await api.post<{ id: string }>('/api/v1/checkout/sessions', sessionRequest())).body;
  const link = await teaLink(api, '100');
  const key = { authorization: `Bearer ${testSecretKey}` };
  const before = await logLength(weir);

  const paths: [string, Record<string, string>, string][] = [
    ['/api/v1/checkout/sessions', key, 'HEAD, GET, POST'],
    [`/api/v1/checkout/sessions/${session.id}`, key, 'HEAD, GET'],
    ['/api/v1/customers', key, 'HEAD, GET, POST'],
    [`/checkout/${session.id}/status`, {}, 'HEAD, GET'],
    [`/checkout/${session.id}/cancel`, {}, 'POST'],
    ['/admin/organizations', { authorization: `Bearer ${ADMIN_TOKEN}` }, 'POST'],
    ['/health', {}, 'GET, HEAD'],
    ['/metrics', {}, 'GET, HEAD'],
  ];
  /** The pages a browser opens, and the way back their 405 page offers (none where the path names no record). */
  const pages: [string, string, string | null][] = [
    [
      `/checkout/${session.id}`,
      'HEAD, GET, POST',
      `<a id="back" href="/checkout/${session.id}">Back to the checkout</a>`,
    ],
    [`/pay/${link.id}`, 'HEAD, GET, POST', `<a id="back" href="/pay/${link.id}">`],
    ['/invoices/00000000-0000-4000-8000-000000000000/pay', 'HEAD, GET', null],
  ];
  const sameMethods = (answer: { headers: Headers }, allowed: string, what: string) =>
    t.is(answer.headers.get('allow')?.split(', ').sort().join(', '), allowed.split(', ').sort().join(', '), what);
  for (const method of ['PROPFIND', 'TRACE', 'QUERY', 'MKCOL', 'PURGE', 'PUT', 'DELETE']) {
    for (const [path, headers, allowed] of paths) {
      const answer = await ask(weir.url, method, path, headers);
      const what = `${method} ${path}`;
      const body = assertError(t, answer, 405, { code: 'method_not_allowed' });
      sameMethods(answer, allowed, what);
      t.is(body.error, 'Method Not Allowed', what);
      t.true(body.message.startsWith(`${method} ${path}: method not allowed; allowed: `), body.message);
    }
    for (const [path, allowed, back] of pages) {
      const answer = await ask(weir.url, method, path);
      const what = `${method} ${path}`;
      t.is(answer.status, 405, what);
      sameMethods(answer, allowed, what);
      t.regex(answer.headers.get('content-type') ?? '', /^text\/html/, what);
      t.regex(answer.headers.get('content-security-policy') ?? '', /default-src/, what);
      const html = String(answer.body);
      t.true(html.includes('<h1>This page cannot be used this way</h1>'), `${what}: ${html.slice(0, 300)}`);
      t.true(html.includes('only opens as a link in your browser'), what);
      t.notRegex(html, /method_not_allowed|statusCode/, what);
      if (back) t.true(html.includes(back), what);
      else t.notRegex(html, /id="back"/, what);
    }
  }
  // A path nothing has stays a 404 whatever the method, and the key is still checked first under /api.
  assertError(t, await ask(weir.url, 'PROPFIND', '/api/v1/nothing-here', key), 404, { code: 'resource_missing' });
  assertError(t, await ask(weir.url, 'PROPFIND', '/api/v1/customers'), 401);
  t.is((await ask(weir.url, 'PROPFIND', '/checkout/a/b/c')).status, 404, 'a page: see the test below');
  t.is(await logLength(weir), before, 'nothing written');
});

test('a path no route has under a hosted page (/pay, /invoices, /checkout) is a 404 page in plain words in the frame of the record it names, with the way back to it (was the JSON error); /api/v1 and the checkout script’s routes keep JSON', async (t) => {
  const weir = await startTestWeir(t);
  const { api, testSecretKey } = await createMerchant(weir.url, 'Corner Coffee');
  const session = (await api.post<{ id: string }>('/api/v1/checkout/sessions', sessionRequest())).body;
  const link = await teaLink(api, '100');
  const invoiceId = await hourInvoice(t, api);
  const unknown = '00000000-0000-4000-8000-000000000000';
  const before = await logLength(weir);

  const notFound = { status: 404, heading: 'Page not found', says: /There is no page at this address\./ };
  const pages: [string, string | null][] = [
    [`/pay/${link.id}/foo`, `<a id="back" href="/pay/${link.id}">Back to the payment page</a>`],
    [`/invoices/${invoiceId}/whatever`, `<a id="back" href="/invoices/${invoiceId}">Back to the invoice</a>`],
    [`/checkout/${session.id}/nope`, `<a id="back" href="/checkout/${session.id}">Back to the checkout</a>`],
    [`/pay/${unknown}/foo`, null],
    [`/invoices/${unknown}/whatever`, null],
    [`/checkout/${unknown}/nope`, null],
    ['/checkout/a/b/c', null],
    ['/pay/', null],
  ];
  for (const [path, back] of pages) {
    for (const method of ['GET', 'POST', 'PROPFIND']) {
      const answer = await ask(weir.url, method, path);
      const html = String(answer.body);
      assertNoticePage(
        t,
        { status: answer.status, headers: answer.headers, html },
        {
          ...notFound,
          testMode: back !== null,
          back,
        },
      );
      t.true(html.includes('<strong>Corner Coffee</strong>') === (back !== null), `${method} ${path}: its frame`);
    }
  }
  // JSON where a client, not a browser, asks: the API, and the script's routes of an unknown session.
  const key = { authorization: `Bearer ${testSecretKey}` };
  assertError(t, await ask(weir.url, 'GET', '/api/v1/nothing-here', key), 404, { code: 'resource_missing' });
  assertError(t, await ask(weir.url, 'GET', `/api/v1/payment-links/${link.id}/foo`, key), 404, {
    code: 'resource_missing',
  });
  assertError(t, await ask(weir.url, 'GET', `/checkout/${unknown}/status`), 404, { code: 'resource_missing' });
  t.is(await logLength(weir), before, 'nothing written');
});

test('no 5xx for client input at the edge: bad percent-encoding, a compressed body, bodies on GET, HEAD, odd content types', async (t) => {
  const weir = await startTestWeir(t);
  const { testSecretKey } = await createMerchant(weir.url);
  const key = { authorization: `Bearer ${testSecretKey}` };
  const json = { ...key, 'content-type': 'application/json' };
  const before = await logLength(weir);

  // Percent-encoding that decodes to nothing is a 404 naming what was asked for, on every area.
  for (const path of ['/api/v1/customers/%ZZ', '/api/v1/customers/%E0%A4%A', '/api/v1/customers/%C0%AF']) {
    assertError(t, await ask(weir.url, 'GET', path, key), 404, { code: 'resource_missing' });
  }
  for (const path of ['/checkout/%ZZ', '/checkout/%ZZ/status', '/invoices/%ZZ/pay', '/pay/%ZZ']) {
    t.is((await ask(weir.url, 'GET', path)).status, 404, path);
  }
  t.is((await ask(weir.url, 'GET', '/api/v1/customers?%ZZ=%ZZ&limit=%ZZ', key)).status, 400);

  // A compressed body is not read as if it were plain: 415, naming the encoding.
  const gzipped = gzipSync(JSON.stringify({ email: 'zip@example.com' }));
  const compressed = await ask(weir.url, 'POST', '/api/v1/customers', { ...json, 'content-encoding': 'gzip' }, gzipped);
  const refused = assertError(t, compressed, 415, { code: 'unsupported_content_encoding' });
  t.regex(refused.message, /Content-Encoding: gzip/);
  t.is(
    (
      await ask(
        weir.url,
        'POST',
        '/api/v1/customers',
        { ...json, 'content-encoding': 'identity' },
        '{"email":"a@b.example"}',
      )
    ).status,
    200,
    'identity is no encoding',
  );

  // A body on GET or DELETE is not read, whatever it holds; the connection goes on.
  const getWithBody = await ask(weir.url, 'GET', '/api/v1/customers', json, '{not json');
  t.is(getWithBody.status, 200, JSON.stringify(getWithBody.body));
  t.is((await ask(weir.url, 'GET', '/health', { 'content-type': 'application/json' }, '{not json')).status, 200);

  // HEAD answers as GET does, without a body, on every area.
  t.is((await ask(weir.url, 'HEAD', '/api/v1/customers', key)).status, 200);
  t.is((await ask(weir.url, 'HEAD', '/health')).status, 200);
  t.is((await ask(weir.url, 'HEAD', '/checkout/00000000-0000-4000-8000-000000000000')).status, 404);

  // Content types that are not JSON, or not a type at all, are a 400 naming the problem.
  for (const contentType of [
    ';;;',
    'text/plain',
    'application/json; boundary="',
    'application/x-www-form-urlencoded',
  ]) {
    const answer = await ask(
      weir.url,
      'POST',
      '/api/v1/customers',
      { ...key, 'content-type': contentType },
      '{"email":"x"}',
    );
    t.true(answer.status >= 400 && answer.status < 500, `${contentType}: ${answer.status}`);
    t.is((answer.body as ErrorBody).statusCode, answer.status);
  }
  t.is(await logLength(weir), before + 1, 'only the identity-encoded customer was written');
  t.is((await apiClient(weir.url, testSecretKey).get('/api/v1/customers')).status, 200);
});
