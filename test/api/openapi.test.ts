import { Validator } from '@seriousme/openapi-schema-validator';
import test from 'ava';
import { launchChromium } from '../support/chromium.ts';
import { routeKey, routeTable } from '../hostile/route-table.ts';
import { watchPage } from '../support/dashboard.ts';
import { responseCheckFor } from '../support/response-check.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { createTestRail } from '../../src/chain-ingest/test-rail.ts';
import { WeirError } from '../../src/shared/errors.ts';
import { WEBHOOK_EVENT_TYPES, TEST_WEBHOOK_EVENT_TYPE } from '../../src/webhooks/webhook-event-types.ts';
import { openApiPath } from '../../src/read-api/schema/openapi-document.ts';

type Operation = {
  operationId?: string;
  summary?: string;
  description?: string;
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string }[];
  requestBody?: unknown;
  responses: Record<
    string,
    {
      description: string;
      content?: Record<string, { examples?: Record<string, unknown> }>;
      headers?: Record<string, { description?: string }>;
    }
  >;
};
type Document = {
  openapi: string;
  servers?: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, { post: { requestBody: unknown } }>;
  components: { securitySchemes: Record<string, unknown> };
};

test('the served document is valid OpenAPI 3.1 and lists every route Weir serves, with no key needed', async (t) => {
  const weir = await startTestWeir(t);
  const response = await fetch(`${weir.url}/api/v1/openapi.json`);
  t.is(response.status, 200);
  const document = (await response.json()) as Document;
  t.is(document.openapi, '3.1.0');

  const validator = new Validator();
  const result = await validator.validate(document as unknown as Record<string, unknown>);
  t.true(result.valid, JSON.stringify(result.errors, null, 1)?.slice(0, 4000));
  t.is(validator.version, '3.1');

  // Every route of every router, read the way the hostile suite reads them.
  for (const route of routeTable(weir)) {
    const { path } = openApiPath(route.path);
    const operation = document.paths[path]?.[route.method.toLowerCase()];
    t.truthy(operation, `${routeKey(route)} is in the document`);
    t.truthy(operation?.summary, `${routeKey(route)} has a summary`);
  }
  t.truthy(document.components.securitySchemes.secretKey);
});

test('every operation has an operationId, unique in the document, and the document names its server relative to itself', async (t) => {
  const weir = await startTestWeir(t);
  const document = (await (await fetch(`${weir.url}/api/v1/openapi.json`)).json()) as Document;
  const ids = new Map<string, string>();
  for (const [path, operations] of Object.entries(document.paths))
    for (const [method, operation] of Object.entries(operations)) {
      const where = `${method} ${path}`;
      t.regex(operation.operationId ?? '', /^[A-Z][A-Za-z]*Controller_[a-z][A-Za-z0-9]*$/, where);
      t.is(ids.get(operation.operationId!), undefined, `${where} shares ${operation.operationId}`);
      ids.set(operation.operationId!, where);
    }
  t.true(ids.size > 100);
  // The reference's own ids, its parameter names aside (`{linkId}` there, `{id}` here).
  t.is(document.paths['/api/v1/checkout/sessions']!.post!.operationId, 'SessionsController_create');
  t.is(document.paths['/api/v1/payment-links/{id}']!.get!.operationId, 'PaymentLinkController_get');
  t.is(document.paths['/api/v1/products/{id}/activate']!.put!.operationId, 'ProductController_activate');
  t.is(document.paths['/api/v1/products/{id}/activate']!.post!.operationId, 'ProductController_activateByPost');
  t.deepEqual(document.servers, [{ url: '/' }]);
});

test('with a public URL set (WEIR_PUBLIC_URL), the document names it as its server, so a client generated from it reaches Weir where the operator publishes it', async (t) => {
  const weir = await startTestWeir(t, { publicUrl: 'https://pay.example.com/weir/' });
  const document = (await (await fetch(`${weir.url}/api/v1/openapi.json`)).json()) as Document;
  t.deepEqual(document.servers, [{ url: 'https://pay.example.com/weir' }]);
});

test('a nullable reference is `anyOf` with a null type, never an `allOf` mixing a $ref with a null type (Redoc and SDK generators reject those)', async (t) => {
  const weir = await startTestWeir(t);
  const document = (await (await fetch(`${weir.url}/api/v1/openapi.json`)).json()) as Document;
  const mixed: string[] = [];
  const walk = (node: unknown, at: string): void => {
    if (Array.isArray(node)) {
      for (const [i, item] of node.entries()) walk(item, `${at}/${i}`);
    } else if (node && typeof node === 'object') {
      const allOf = (node as { allOf?: unknown }).allOf;
      const nullType = (m: { type?: unknown }) =>
        m.type === 'null' || (Array.isArray(m.type) && m.type.includes('null'));
      if (
        Array.isArray(allOf) &&
        allOf.some((m: { $ref?: unknown }) => m.$ref) &&
        allOf.some((m: { type?: unknown }) => nullType(m))
      )
        mixed.push(at);
      for (const [key, value] of Object.entries(node)) walk(value, `${at}/${key}`);
    }
  };
  walk(document, '#');
  t.deepEqual(mixed, []);
  const schemas = (
    document.components as unknown as { schemas: Record<string, { properties: Record<string, unknown> }> }
  ).schemas;
  t.deepEqual(schemas.Invoice!.properties.customer, {
    anyOf: [{ $ref: '#/components/schemas/Customer' }, { type: 'null' }],
  });
  // An extended reference (allOf: the $ref and Weir's fields) is made nullable the same way.
  const asset = schemas.Transaction!.properties.asset as { anyOf: { allOf?: { $ref?: string }[] }[] };
  t.deepEqual(asset.anyOf[1], { type: 'null' });
  t.is(asset.anyOf[0]!.allOf?.[0]?.$ref, '#/components/schemas/SessionAsset');
});

test('every list names, in its description, each date it is bounded by and the `timezone` a date alone is read in, in the same words', async (t) => {
  const weir = await startTestWeir(t);
  const document = (await (await fetch(`${weir.url}/api/v1/openapi.json`)).json()) as Document;
  const lists = Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.entries(operations)
      .filter(([, operation]) => operation.parameters?.some((p) => p.name === 'timezone' && p.in === 'query'))
      .filter(([, operation]) => operation.parameters?.some((p) => p.name === 'createdAt[gte]'))
      .map(([method, operation]) => ({ where: `${method} ${path}`, operation })),
  );
  t.true(lists.length >= 15, `${lists.length} lists`);
  const wrong: string[] = [];
  for (const { where, operation } of lists) {
    const bounded = (operation.parameters ?? [])
      .filter((p) => p.name.endsWith('[gte]'))
      .map((p) => `\`${p.name.slice(0, -'[gte]'.length)}\``);
    const description = operation.description ?? '';
    const sentence =
      /Bound (.+) with `\[gt\|gte\|lt\|lte\]`: a timestamp is exact, a date alone is that whole day in `timezone` \(an IANA time zone, UTC unless given\)\./.exec(
        description,
      );
    if (!sentence) wrong.push(`${where}: ${description || 'no description'}`);
    else for (const field of bounded) if (!sentence[1]!.includes(field)) wrong.push(`${where}: does not name ${field}`);
  }
  t.deepEqual(wrong, []);
});

test("an invoice's paymentSetting.preferredChainId, which update clears with null, is documented nullable (a generated client lets null be sent)", async (t) => {
  const weir = await startTestWeir(t);
  type Properties = Record<string, { properties?: Properties; type?: unknown; minimum?: number }>;
  const document = (await (await fetch(`${weir.url}/api/v1/openapi.json`)).json()) as {
    components: { schemas: Record<string, { properties: Properties }> };
  };
  for (const body of ['InvoiceUpdateRequest', 'InvoiceCreateRequest'])
    t.like(
      document.components.schemas[body]!.properties.paymentSetting!.properties!.preferredChainId,
      { type: ['integer', 'null'], minimum: 1 },
      body,
    );
});

test('allowSwap and slippagePercentage say, wherever they are taken or shown, that they change nothing: Weir does no swap', async (t) => {
  const weir = await startTestWeir(t);
  const document: unknown = await (await fetch(`${weir.url}/api/v1/openapi.json`)).json();
  const said: Record<string, string> = {};
  const walk = (node: unknown, path: string): void => {
    if (node === null || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      const at = `${path}.${key}`;
      if (path.endsWith('.properties') && (key === 'allowSwap' || key === 'slippagePercentage'))
        said[at] = (value as { description?: string }).description ?? '';
      walk(value, at);
    }
  };
  walk(document, '');
  t.true(Object.keys(said).length >= 8, JSON.stringify(Object.keys(said)));
  for (const [at, description] of Object.entries(said)) t.regex(description, /does no (currency conversion|swaps)/, at);
});

test('the error codes these routes answer are in the document: amount_too_large on a session create, transaction_not_found on a recovery by hash', async (t) => {
  // A recovery whose chain knows no such transaction (the real rails' answer, without a chain to ask).
  const rail = {
    ...createTestRail(),
    recovery: () => ({
      recover: () => Promise.reject(new WeirError(404, 'Not Found', 'transaction_not_found', 'no such transaction')),
    }),
  };
  const weir = await startTestWeir(t, { testRail: false }, { extraRails: [rail] });
  const check = await responseCheckFor(weir.url);
  if (!check) return t.fail('no document served');
  const { api } = await createMerchant(weir.url);
  const answers = [
    [
      '/api/v1/checkout/sessions',
      await api.post('/api/v1/checkout/sessions', sessionRequest('9223372036854775800', 2)),
    ],
    [
      '/api/v1/checkout/sessions/auto-recover-by-transaction-hash',
      await api.post('/api/v1/checkout/sessions/auto-recover-by-transaction-hash', {
        chainId: 7357,
        transactionHash: `0x${'ab'.repeat(32)}`,
      }),
    ],
  ] as const;
  t.deepEqual(
    answers.map(([, answer]) => [answer.status, (answer.body as { code?: string }).code]),
    [
      [400, 'amount_too_large'],
      [404, 'transaction_not_found'],
    ],
  );
  for (const [path, answer] of answers) {
    const code = (answer.body as { code: string }).code;
    t.true(
      check.documentedCodes('POST', `${weir.url}${path}`, answer.status)?.includes(code),
      `${path} (${answer.status}) documents ${code}`,
    );
  }
});

test("a merchant wallet that is broken is documented as one 422 payment_method_invalid wherever a payment would go to it (session create, invoice finalize and send, a link's allowedChains), never as a 400; a link's allowedChains with no payment method as a 400 payment_method_not_available", async (t) => {
  const weir = await startTestWeir(t);
  const check = await responseCheckFor(weir.url);
  if (!check) return t.fail('no document served');
  const id = '0f8fad5b-d9cb-469f-a165-70867728950e';
  for (const path of ['/api/v1/checkout/sessions', `/api/v1/invoices/${id}/finalize`, `/api/v1/invoices/${id}/send`]) {
    t.deepEqual(check.documentedCodes('POST', `${weir.url}${path}`, 422), ['payment_method_invalid'], path);
    t.false(check.documentedCodes('POST', `${weir.url}${path}`, 400)?.includes('payment_method_invalid'), path);
  }
  for (const [method, path] of [
    ['POST', '/api/v1/payment-links'],
    ['PUT', `/api/v1/payment-links/${id}`],
  ] as const) {
    t.true(check.documentedCodes(method, `${weir.url}${path}`, 400)?.includes('payment_method_not_available'), path);
    t.deepEqual(check.documentedCodes(method, `${weir.url}${path}`, 422), ['payment_method_invalid'], path);
  }
});

test("amounts are documented as scaled by 10^8, as the API reads them, not in the asset's smallest unit (1.50 USDC is 150000000, not 1500000); chain units only where they are", async (t) => {
  const weir = await startTestWeir(t);
  const document = (await (await fetch(`${weir.url}/api/v1/openapi.json`)).json()) as Document & {
    info: { description: string };
  };
  t.regex(document.info.description, /scaled by 10\^8/);
  t.notRegex(document.info.description, /smallest unit/);
  const described = new Map<string, Set<string>>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) for (const item of node) walk(item);
    else if (node && typeof node === 'object') {
      const properties = (node as { properties?: Record<string, { description?: string }> }).properties;
      if (properties && typeof properties === 'object')
        for (const [name, schema] of Object.entries(properties))
          if (typeof schema?.description === 'string')
            described.set(name, (described.get(name) ?? new Set()).add(schema.description));
      for (const value of Object.values(node)) walk(value);
    }
  };
  walk(document);
  for (const name of ['unitAmount', 'amountTotal', 'amountReceived', 'amountRemaining', 'minimumAmount']) {
    const descriptions = [...(described.get(name) ?? [])];
    t.true(
      descriptions.some((d) => d.includes('10^8')),
      `${name}: ${descriptions.join(' | ')}`,
    );
    for (const description of descriptions) t.notRegex(description, /smallest unit/, name);
  }
  for (const name of ['amountRaw', 'amountDueRaw', 'amountRemainingRaw'])
    for (const description of described.get(name) ?? [])
      t.regex(description, /chain units|own units/, `${name}: ${description}`);
});

test('declared routes carry their errors with codes and examples, the Idempotency-Key header, and the key scheme', async (t) => {
  const weir = await startTestWeir(t);
  const document = (await (await fetch(`${weir.url}/api/v1/openapi.json`)).json()) as Document;
  const create = document.paths['/api/v1/customers']!.post!;
  t.deepEqual(create.security, [{ secretKey: [] }]);
  t.true(create.parameters?.some((p) => p.name === 'Idempotency-Key' && p.in === 'header'));
  t.truthy(create.requestBody);
  const bad = create.responses['400']!;
  t.regex(bad.description, /`parameter_missing`/);
  t.regex(bad.description, /`email_invalid`/);
  t.truthy(bad.content?.['application/json']?.examples?.email_invalid);
  t.regex(create.responses['401']!.description, /`authentication_required`/);
  t.regex(create.responses['409']!.description, /`idempotency_key_in_use`/);
  // A retry of a request still running has its own code, and says when to come back.
  t.regex(create.responses['409']!.description, /`idempotency_request_in_progress`/);
  t.truthy(create.responses['409']!.content?.['application/json']?.examples?.idempotency_request_in_progress);
  t.regex(create.responses['409']!.headers?.['Retry-After']?.description ?? '', /idempotency_request_in_progress/);
  t.regex(create.responses['400']!.description, /Idempotency-Key is empty/);
  t.regex(document.paths['/api/v1/customers/{id}']!.get!.responses['404']!.description, /`resource_missing`/);
  // GET routes take no Idempotency-Key.
  t.false(document.paths['/api/v1/customers']!.get!.parameters?.some((p) => p.name === 'Idempotency-Key') ?? false);
  // Every 429 says when to come back, as the answer does (test/api/rate-limits.test.ts).
  const limited = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).flatMap(([method, operation]) =>
      operation.responses?.['429'] ? [[`${method} ${path}`, operation.responses['429']] as const] : [],
    ),
  );
  t.true(limited.length > 0);
  for (const [name, response] of limited)
    t.regex(response.headers?.['Retry-After']?.description ?? '', /`rate_limited`/, name);
  // A read-only query takes no Idempotency-Key: none is documented, nor its 409.
  const query = document.paths['/api/v1/analytics/query']!.post!;
  t.false(query.parameters?.some((p) => p.name === 'Idempotency-Key') ?? false);
  t.is(query.responses['409'], undefined);
  t.regex(query.description ?? '', /Idempotency-Key/);
  // A reading key may send it (scopes.ts reads the same declaration), and it writes nothing to wait for.
  t.is(query.responses['403'], undefined);
  t.is(query.responses['503'], undefined);
});

test('the hosted pages and the admin API, which count requests (rate-limits.ts), document their 429 rate_limited with Retry-After', async (t) => {
  const weir = await startTestWeir(t);
  const document = (await (await fetch(`${weir.url}/api/v1/openapi.json`)).json()) as Document;
  const counted = Object.entries(document.paths).filter(([path]) => /^\/(checkout|invoices|pay|admin)\//.test(path));
  t.true(counted.length > 10);
  for (const [path, item] of counted)
    for (const [method, operation] of Object.entries(item)) {
      const limited = operation.responses['429'];
      t.truthy(limited?.content?.['application/json']?.examples?.rate_limited, `${method} ${path}`);
      t.truthy(limited?.headers?.['Retry-After'], `${method} ${path}`);
    }
  t.truthy(document.paths['/metrics']!.get!.responses['429']);
  // The docs and the static assets are not counted.
  t.is(document.paths['/docs']!.get!.responses['429'], undefined);
});

test('pages are documented as HTML with their redirects, the invoice PDF as a file, and form and upload bodies by their type', async (t) => {
  const weir = await startTestWeir(t);
  const document = (await (await fetch(`${weir.url}/api/v1/openapi.json`)).json()) as Document;
  type Answer = {
    content?: Record<string, { schema?: { type?: string; format?: string; $ref?: string } }>;
    headers?: Record<string, unknown>;
  };
  const answers = (path: string, method: string) =>
    document.paths[path]![method]!.responses as Record<string, Answer & { description: string }>;
  const types = (answer: Answer | undefined) => Object.keys(answer?.content ?? {});
  const bodyTypes = (path: string, method: string) =>
    Object.keys((document.paths[path]![method]!.requestBody as { content: Record<string, unknown> }).content);

  const page = answers('/checkout/{id}', 'get');
  t.deepEqual(types(page['200']), ['text/html']);
  t.deepEqual(types(page['404']), ['text/html'], 'an unknown session is a page, not the JSON error');
  t.deepEqual(page['200']!.content!['text/html']!.schema, { type: 'string' });
  t.deepEqual(types(answers('/docs', 'get')['200']), ['text/html']);

  const pay = answers('/invoices/{id}/pay', 'get');
  t.truthy(pay['302']!.headers?.Location, 'the redirect to the checkout session');
  t.deepEqual(types(pay['409']), ['text/html']);
  t.deepEqual(answers('/invoices/{id}/pdf', 'get')['200']!.content!['application/pdf']!.schema, {
    type: 'string',
    format: 'binary',
  });
  t.deepEqual(types(answers('/invoices/{id}/pdf', 'get')['404']), ['text/html'], 'an unknown invoice is a page');
  // A browser's pages answer their passing refusals as pages (hosted-error-pages.ts), the PDF link too.
  for (const [path, method, statuses] of [
    ['/checkout/{id}', 'get', ['429', '503']],
    ['/checkout/{id}', 'post', ['413', '429', '503']],
    ['/invoices/{id}', 'get', ['429', '503']],
    ['/invoices/{id}/pdf', 'get', ['429', '503']],
    ['/invoices/{id}/pay', 'get', ['429', '503']],
  ] as const)
    for (const status of statuses)
      t.true(types(answers(path, method)[status]).includes('text/html'), `${method} ${path} ${status}`);
  t.false(types(answers('/invoices/{id}/pdf', 'get')['429']).includes('application/pdf'), 'a refusal is no PDF');
  t.false(types(answers('/checkout/{id}/status', 'get')['429']).includes('text/html'), "the page script's JSON");

  const submit = answers('/pay/{id}', 'post');
  t.truthy(submit['303']!.headers?.Location);
  t.falsy(submit['200'], 'a submission is answered by a redirect or the form again, never a 200');
  t.deepEqual(types(submit['400']), ['text/html']);
  t.deepEqual(bodyTypes('/pay/{id}', 'post'), ['application/x-www-form-urlencoded']);

  // The page's script calls JSON routes: their answers are described in full.
  t.deepEqual(types(answers('/checkout/{id}/status', 'get')['200']), ['application/json']);
  t.truthy(answers('/checkout/{id}/payment-method', 'post')['200']!.content!['application/json']!.schema?.$ref);

  t.deepEqual(bodyTypes('/api/v1/organization/brand', 'put'), ['application/json', 'multipart/form-data']);
  const schemas = (
    document.components as unknown as { schemas: Record<string, { properties: Record<string, unknown> }> }
  ).schemas;
  t.like(schemas.BrandForm!.properties, { brandLogo: { type: 'string', format: 'binary' } });
  t.truthy(schemas.BrandForm!.properties.brandColor);
});

test('the document has a webhook for every event type Weir sends, with its data.object', async (t) => {
  const weir = await startTestWeir(t);
  const document = (await (await fetch(`${weir.url}/api/v1/openapi.json`)).json()) as Document;
  for (const type of [...WEBHOOK_EVENT_TYPES, TEST_WEBHOOK_EVENT_TYPE]) {
    const body = JSON.stringify(document.webhooks[type]?.post.requestBody ?? null);
    t.regex(body, /"data"/, type);
  }
  t.regex(JSON.stringify(document.webhooks['customer.subscription.created']), /#\/components\/schemas\/Subscription/);
});

test('/docs renders the document offline: the page and its script are served by Weir, with no CSP violation, console error, request to another origin or failed request (a source map named but not served)', async (t) => {
  const weir = await startTestWeir(t);
  const page = await fetch(`${weir.url}/docs`);
  t.is(page.status, 200);
  const csp = page.headers.get('content-security-policy') ?? '';
  t.regex(csp, /script-src 'self'/);
  t.regex(csp, /img-src 'self' data:;/, 'no CDN allowed in');
  const html = await page.text();
  t.regex(html, /spec-url="\/api\/v1\/openapi\.json"/);
  t.notRegex(html, /https?:\/\//, 'nothing from another origin');

  // Built on its first request (seconds on a loaded machine): here, not inside the page's waits.
  t.is((await fetch(`${weir.url}/api/v1/openapi.json`)).status, 200);

  const browser = await launchChromium(t);
  const tab = await browser.newPage();
  // Redoc parses and draws hundreds of operations: tens of seconds on a loaded 2-core machine. Each
  // wait below is for something the page shows, so none has a guess at its speed of its own: the
  // test's timeout bounds them.
  tab.setDefaultTimeout(0);
  const problems = await watchPage(tab);
  // Redoc warns (without failing) about schemas it cannot merge, such as a nullable reference written as allOf.
  const warnings: string[] = [];
  tab.on('console', (message) => {
    if (message.type() === 'warning') warnings.push(message.text());
  });
  // Every request the page asks for, loaded or not: a CSP-blocked one never finishes, so asked is what counts.
  const outside: string[] = [];
  tab.on('request', (request) => {
    if (!request.url().startsWith(weir.url) && !request.url().startsWith('blob:') && !request.url().startsWith('data:'))
      outside.push(request.url());
  });
  const failed: string[] = [];
  tab.on('requestfailed', (request) => failed.push(`${request.url()}: ${request.failure()?.errorText}`));
  // The source maps the scripts name, which the browser asks for once its developer tools are open.
  const devtools = await tab.context().newCDPSession(tab);
  const maps: string[] = [];
  devtools.on('Debugger.scriptParsed', ({ url, sourceMapURL }) => {
    if (sourceMapURL && !sourceMapURL.startsWith('data:')) maps.push(new URL(sourceMapURL, url).href);
  });
  await devtools.send('Debugger.enable');
  await tab.goto(`${weir.url}/docs`);
  await tab.getByRole('heading', { name: 'Create a customer' }).first().waitFor();
  // Redoc draws its footer's logo in an effect after the footer shows: two frames later it has been
  // asked for, and once every image has loaded or failed, any refusal of it has been reported.
  await tab.getByRole('link', { name: /API docs by Redocly/ }).waitFor();
  await tab.evaluate(`new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))`);
  await tab.evaluate(
    `Promise.all([...document.images].map((image) => image.complete || new Promise((done) => { image.addEventListener('load', done); image.addEventListener('error', done); })))`,
  );
  if (process.env.DOCS_SCREENSHOT) await tab.screenshot({ path: process.env.DOCS_SCREENSHOT });
  for (const map of maps) {
    const answer = await fetch(map).catch(() => null);
    if (answer?.status !== 200) failed.push(`${map}: ${answer?.status ?? 'not loaded'}`);
  }
  // Nor does the search worker Redoc makes from a blob name one (nothing could answer it there).
  const script = await (await fetch(`${weir.url}/docs/redoc.standalone.js`)).text();
  t.deepEqual(script.match(/sourceMappingURL=(?!data:)[^\s'"\\]+/g), null);
  t.deepEqual(outside, []);
  t.deepEqual(failed, []);
  t.deepEqual(problems(), []);
  t.deepEqual(warnings, []);
});

/** Headers of the protocol, not the API's (Node and Koa set them; `nosniff` is for browsers). */
const PROTOCOL_HEADERS = new Set([
  'content-type',
  'content-length',
  'date',
  'connection',
  'keep-alive',
  'vary',
  'x-content-type-options',
]);

test("the headers Weir sends on an answer are in that answer's documented headers: a replayed POST, a 400, a GET", async (t) => {
  const weir = await startTestWeir(t);
  const document = (await (await fetch(`${weir.url}/api/v1/openapi.json`)).json()) as Document & {
    components: { headers?: Record<string, unknown> };
  };
  const { api } = await createMerchant(weir.url);
  const key = { 'Idempotency-Key': 'documented-headers-1' };
  const product = { name: 'Pro plan' };
  t.is((await api.post('/api/v1/products', product, key)).status, 200);
  const replayed = await api.post('/api/v1/products', product, key);
  t.is(replayed.headers.get('idempotent-replayed'), 'true');
  const refused = await api.post('/api/v1/products', {});
  t.is(refused.status, 400);
  const listed = await api.get('/api/v1/products');
  const undocumented: string[] = [];
  for (const [what, path, method, answer] of [
    ['replayed POST', '/api/v1/products', 'post', replayed],
    ['400', '/api/v1/products', 'post', refused],
    ['GET', '/api/v1/products', 'get', listed],
  ] as const) {
    const documented = Object.keys(document.paths[path]![method]!.responses[String(answer.status)]?.headers ?? {});
    const lower = new Set(documented.map((name) => name.toLowerCase()));
    for (const [name] of answer.headers)
      if (!PROTOCOL_HEADERS.has(name) && !lower.has(name)) undocumented.push(`${what} ${answer.status}: ${name}`);
    t.true(answer.headers.has('x-request-id'), what);
  }
  t.deepEqual(undocumented, []);
  // Shared components, referenced: not a copy per response.
  t.deepEqual(Object.keys(document.components.headers ?? {}).sort(), ['IdempotentReplayed', 'RequestId']);
  const header = document.paths['/api/v1/products']!.post!.responses['200']!.headers!['Idempotent-Replayed'];
  t.deepEqual(header, { $ref: '#/components/headers/IdempotentReplayed' });
});

test('the create bodies of checkout sessions, invoices, payment links and webhook endpoints describe every field; reading a session and listing endpoints say what they answer', async (t) => {
  const weir = await startTestWeir(t);
  const document = (await (await fetch(`${weir.url}/api/v1/openapi.json`)).json()) as Document & {
    components: { schemas: Record<string, { properties?: Record<string, { description?: string }> }> };
  };
  const undescribed: string[] = [];
  for (const path of [
    '/api/v1/checkout/sessions',
    '/api/v1/invoices',
    '/api/v1/payment-links',
    '/api/v1/webhook-endpoints',
  ]) {
    const body = document.paths[path]!.post!.requestBody as {
      content: { 'application/json': { schema: { $ref?: string } } };
    };
    const ref = body.content['application/json'].schema.$ref!;
    const schema = document.components.schemas[ref.split('/').pop()!]!;
    for (const [name, property] of Object.entries(schema.properties ?? {}))
      if (!property.description?.trim()) undescribed.push(`POST ${path} ${name}`);
  }
  for (const [path, method] of [
    ['/api/v1/checkout/sessions/{id}', 'get'],
    ['/api/v1/webhook-endpoints', 'get'],
  ] as const)
    if (!document.paths[path]![method]!.description?.trim()) undescribed.push(`${method.toUpperCase()} ${path}`);
  t.deepEqual(undescribed, []);
});
