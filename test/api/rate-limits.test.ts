import test from 'ava';
import { DEFAULT_RATE_LIMITS } from '../../src/read-api/rate-limits.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { apiClient } from '../support/api-client.ts';
import { ADMIN_TOKEN, createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { assertRateLimited, teaLink, type ErrorBody, type Page } from './helpers.ts';

const formPost = (url: string, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: '',
  });

test('rate limit per API key: past its burst a key gets 429 rate_limited with Retry-After; other keys go on; the clock refills it', async (t) => {
  const clock = createManualClock();
  const weir = await startTestWeir(t, { rateLimitApiKey: { perSecond: 2, burst: 5 } }, { clock });
  const alice = await createMerchant(weir.url, 'Alice'); // one request: the wallet
  const bob = await createMerchant(weir.url, 'Bob');
  for (let i = 0; i < 4; i++) t.is((await alice.api.get('/api/v1/customers')).status, 200);
  const refused = assertRateLimited(t, await alice.api.get('/api/v1/customers'), 'api_key', 1);
  t.regex(refused.message, /too many requests with this API key \(at most 2\/s, bursts of 5\); try again in 1 s$/);
  // Writes are refused before anything is read or written.
  assertRateLimited(t, await alice.api.post('/api/v1/checkout/sessions', sessionRequest()), 'api_key', 1);
  t.is((await alice.live.get('/api/v1/customers')).status, 200, 'the live key of the same organization is another key');
  t.is((await bob.api.get('/api/v1/customers')).status, 200, 'another organization is not slowed down');

  clock.advanceBy(1000);
  const sessions = await alice.api.get<Page<unknown>>('/api/v1/checkout/sessions');
  t.is(sessions.status, 200, 'two tokens a second');
  t.is(sessions.body.count, 0, 'the refused create wrote nothing');
  t.is((await alice.api.get('/api/v1/customers')).status, 200);
  assertRateLimited(t, await alice.api.get('/api/v1/customers'), 'api_key', 1);
});

test('rate limit on the hosted pages: 300 unauthenticated POST /pay/{linkId} from one address open only the burst of sessions; page reads go on', async (t) => {
  const clock = createManualClock();
  const weir = await startTestWeir(t, {}, { clock });
  const { api } = await createMerchant(weir.url);
  const link = await teaLink(api, '100');
  const burst = DEFAULT_RATE_LIMITS.hostedCreates!.burst;

  const statuses = new Map<number, number>();
  let limited: Response | null = null;
  for (let i = 0; i < 300; i++) {
    const answer = await formPost(link.url);
    statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    if (answer.status === 429) limited = answer;
    else await answer.arrayBuffer();
  }
  t.deepEqual(Object.fromEntries(statuses), { 303: burst, 429: 300 - burst });
  const sessions = async () => (await api.get<Page<unknown>>('/api/v1/checkout/sessions')).body.count;
  t.is(await sessions(), burst);
  t.is(limited!.headers.get('retry-after'), '1');
  // The payer's browser gets a page saying so, not the API's JSON refusal.
  t.regex(limited!.headers.get('content-type') ?? '', /^text\/html/);
  t.regex(await limited!.text(), /<p id="notice">Too many payments were started from your connection in a short time/);

  // Reading the page is another, larger bucket.
  t.is((await fetch(link.url)).status, 200);
  // A second later the address may start one more payment.
  clock.advanceBy(1000);
  t.is((await formPost(link.url)).status, 303);
  t.is((await formPost(link.url)).status, 429);
  t.is(await sessions(), burst + 1);
});

test('rate limit on the hosted pages: page reads and status polls per client address, with the creates counted in both', async (t) => {
  const clock = createManualClock();
  const weir = await startTestWeir(
    t,
    { rateLimitHosted: { perSecond: 1, burst: 6 }, rateLimitHostedCreates: { perSecond: 1, burst: 2 } },
    { clock },
  );
  const { api } = await createMerchant(weir.url);
  const session = (await api.post<{ id: string }>('/api/v1/checkout/sessions', sessionRequest())).body;
  const link = await teaLink(api, '100');
  const payer = apiClient(weir.url);

  t.is((await payer.get(`/checkout/${session.id}`)).status, 200);
  t.is((await payer.get(`/checkout/${session.id}/status`)).status, 200);
  t.is((await formPost(link.url)).status, 303);
  t.is((await formPost(link.url)).status, 303);
  const linkPage = await payer.post(`/pay/${'0'.repeat(8)}`, {});
  t.is(linkPage.status, 429, 'hosted_creates: a payment link page says so as a page');
  t.is(linkPage.headers.get('retry-after'), '1');
  t.is(
    (await payer.get('/invoices/00000000-0000-4000-8000-000000000000/pay')).status,
    429,
    'an invoice pay link may open a session: a create',
  );
  t.is((await payer.get(`/checkout/${session.id}/status`)).status, 200);
  t.is((await payer.get(`/checkout/${session.id}/status`)).status, 200);
  // The page's script shows the message: the page's words, not the limit's settings.
  const scriptLimited = async () => {
    const polled = await payer.get<ErrorBody>(`/checkout/${session.id}/status`);
    t.like(polled, { status: 429, body: { statusCode: 429, error: 'Too Many Requests', code: 'rate_limited' } });
    t.is(polled.body.message, 'Too many requests came from your connection in a short time. Try again in 1 second.');
    t.is(polled.headers.get('retry-after'), '1');
  };
  await scriptLimited();
  // The checkout page itself says so as a page (hosted-checkout-page.test.ts reads it).
  const checkoutPage = await fetch(`${weir.url}/checkout/unknown-id`);
  t.is(checkoutPage.status, 429);
  t.is(checkoutPage.headers.get('retry-after'), '1');
  t.regex(checkoutPage.headers.get('content-type') ?? '', /^text\/html/);
  // The API and /health are not the hosted pages.
  t.is((await api.get(`/api/v1/checkout/sessions/${session.id}`)).status, 200);
  t.is((await payer.get('/health')).status, 200);

  clock.advanceBy(3000);
  for (let i = 0; i < 3; i++) t.is((await payer.get(`/checkout/${session.id}/status`)).status, 200);
  await scriptLimited();
});

test('rate limit on failed authentication: after 100 bad admin tokens every request from that address waits, with the right token or a valid key too, until the clock refills', async (t) => {
  const clock = createManualClock();
  const weir = await startTestWeir(t, {}, { clock });
  const { api, testSecretKey } = await createMerchant(weir.url);
  const session = (await api.post<{ id: string }>('/api/v1/checkout/sessions', sessionRequest())).body;
  const budget = DEFAULT_RATE_LIMITS.authFailures!.burst;

  const statuses: number[] = [];
  for (let i = 0; i < 500; i++) {
    const guess = await apiClient(weir.url, `guess-${i}`).post('/admin/organizations', { name: 'x' });
    statuses.push(guess.status);
  }
  t.is(statuses.filter((s) => s === 401).length, budget);
  t.is(statuses.filter((s) => s === 429).length, 500 - budget);
  t.deepEqual(statuses.slice(0, budget), Array<number>(budget).fill(401), 'the budget first, then the waits');

  const admin = await apiClient(weir.url, ADMIN_TOKEN).post('/admin/organizations', { name: 'Real' });
  const refused = assertRateLimited(t, admin, 'auth_failures', 1);
  t.regex(refused.message, /too many failed authentications from this address.*with a valid key too/);
  assertRateLimited(t, await api.get('/api/v1/customers'), 'auth_failures', 1);
  assertRateLimited(t, await apiClient(weir.url).get('/api/v1/customers'), 'auth_failures', 1);
  // A payer's pages need no key, so they are not held up.
  t.is((await apiClient(weir.url).get(`/checkout/${session.id}/status`)).status, 200);

  clock.advanceBy(1000);
  t.is(
    (await apiClient(weir.url, testSecretKey).get('/api/v1/customers')).status,
    200,
    'one token back: a valid key passes',
  );
  t.is((await apiClient(weir.url, testSecretKey).get('/api/v1/customers')).status, 200, 'and successes spend nothing');
  t.is((await apiClient(weir.url, 'sk_test_wrong').get('/api/v1/customers')).status, 401);
  assertRateLimited(t, await api.get('/api/v1/customers'), 'auth_failures', 1);
});

test('rate limits count the address the proxy in front saw (WEIR_TRUST_PROXY): entries a client puts before it share its bucket', async (t) => {
  // One token an hour on a clock that stands still: a slow machine cannot refill a bucket mid-test.
  const weir = await startTestWeir(
    t,
    { trustProxy: true, rateLimitAuthFailures: { perSecond: 1 / 3600, burst: 2 } },
    { clock: createManualClock() },
  );
  const from = (forwardedFor: string) =>
    apiClient(weir.url, 'sk_test_wrong').call('GET', '/api/v1/customers', undefined, {
      'x-forwarded-for': forwardedFor,
    });
  t.is((await from('1.1.1.1, 203.0.113.7')).status, 401);
  t.is((await from('2.2.2.2, 203.0.113.7')).status, 401);
  assertRateLimited(t, await from('3.3.3.3, 203.0.113.7'), 'auth_failures', 3600);
  t.is((await from('203.0.113.8')).status, 401, 'another client address has its own bucket');
  // An IPv6 client is counted by its /64: another address of the same network shares the bucket.
  t.is((await from('2001:db8:1:2::1')).status, 401);
  t.is((await from('2001:db8:1:2:ffff::9')).status, 401);
  assertRateLimited(t, await from('2001:db8:1:2::abcd'), 'auth_failures', 3600);
  t.is((await from('2001:db8:1:3::1')).status, 401);
});

test('rate limits: without WEIR_TRUST_PROXY a forged X-Forwarded-For changes nothing; WEIR_RATE_LIMITS=off turns every limit off', async (t) => {
  const weir = await startTestWeir(
    t,
    { rateLimitAuthFailures: { perSecond: 1 / 3600, burst: 1 } },
    { clock: createManualClock() },
  );
  const wrong = apiClient(weir.url, 'sk_test_wrong');
  t.is((await wrong.call('GET', '/api/v1/customers', undefined, { 'x-forwarded-for': '1.1.1.1' })).status, 401);
  t.is((await wrong.call('GET', '/api/v1/customers', undefined, { 'x-forwarded-for': '2.2.2.2' })).status, 429);

  const off = await startTestWeir(t, { rateLimits: false, rateLimitAuthFailures: { perSecond: 1, burst: 1 } });
  const { testSecretKey } = await createMerchant(off.url);
  for (let i = 0; i < 150; i++)
    t.is((await apiClient(off.url, `sk_test_wrong${i}`).get('/api/v1/customers')).status, 401);
  t.is((await apiClient(off.url, testSecretKey).get('/api/v1/customers')).status, 200);
});
