import test, { type ExecutionContext } from 'ava';
import type { ProjectionRunner } from '../../src/projections/projection-runner.ts';
import { ReadModelsBehindError } from '../../src/shared/errors.ts';
import type { ApiResponse } from '../support/api-client.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';

/**
 * A Weir whose read models, once armed, are "not caught up in time" for the next request that
 * waits for them (the runner's own timeout error): the request wrote, then fails with a 503, as
 * when a MongoDB read store is slow.
 */
async function weirWithLaggingReadModels(t: ExecutionContext) {
  const lag = { armed: false };
  const weir = await startTestWeir(
    t,
    {},
    {
      wrapProjections: (runner: ProjectionRunner): ProjectionRunner => ({
        ...runner,
        waitFor(position, timeoutMs) {
          if (!lag.armed) return runner.waitFor(position, timeoutMs);
          lag.armed = false;
          return Promise.reject(
            new ReadModelsBehindError(`read models did not reach log position ${position} within 5000 ms`),
          );
        },
      }),
    },
  );
  const merchant = await createMerchant(weir.url);
  const count = (collection: string) =>
    weir.readStore.collection(collection).count({ organizationId: merchant.organizationId });
  /** The request fails after writing, then runs again with the same key and body. */
  async function failThenRetry<T>(
    send: (headers: Record<string, string>) => Promise<ApiResponse<T>>,
    key: string,
  ): Promise<ApiResponse<T>> {
    lag.armed = true;
    const failed = await send({ 'Idempotency-Key': key });
    t.is(failed.status, 503, 'the first run wrote, then did not see its read models in time');
    t.is((failed.body as { code?: string }).code, 'read_models_behind');
    await weir.projections.waitFor((await weir.eventStore.headPosition())!);
    return send({ 'Idempotency-Key': key });
  }
  return { weir, merchant, count, failThenRetry };
}

test('a checkout session request run again with its Idempotency-Key after failing past its write creates nothing twice: the same session, product and price', async (t) => {
  const { merchant, count, failThenRetry } = await weirWithLaggingReadModels(t);
  const retried = await failThenRetry(
    (headers) =>
      merchant.api.post<{ id: string; lineItems: { data: { price: { id: string; productId: string } }[] } }>(
        '/api/v1/checkout/sessions',
        sessionRequest(),
        headers,
      ),
    'order-1',
  );
  t.is(retried.status, 200);
  t.is(await count('checkout_sessions'), 1);
  t.is(await count('products'), 1);
  t.is(await count('prices'), 1);
  const [only] = await merchant.api
    .get<{ data: { id: string }[] }>('/api/v1/checkout/sessions')
    .then((r) => r.body.data);
  t.is(retried.body.id, only!.id);
  // The same key and body once more: the recorded response.
  const replayed = await merchant.api.post<{ id: string }>('/api/v1/checkout/sessions', sessionRequest(), {
    'Idempotency-Key': 'order-1',
  });
  t.is(replayed.headers.get('idempotent-replayed'), 'true');
  t.is(replayed.body.id, only!.id);
});

test('the run again may send the same JSON with its keys in another order: still the same session, product and price', async (t) => {
  const { merchant, count, failThenRetry } = await weirWithLaggingReadModels(t);
  const request = sessionRequest();
  let sent = 0;
  const retried = await failThenRetry(
    (headers) =>
      merchant.api.post<{ id: string }>(
        '/api/v1/checkout/sessions',
        // The first run's body as JSON.stringify writes it, the second's keys reversed and indented.
        sent++ === 0
          ? JSON.stringify(request)
          : JSON.stringify(Object.fromEntries(Object.entries(request).reverse()), null, 1),
        headers,
      ),
    'order-reordered',
  );
  t.is(retried.status, 200, JSON.stringify(retried.body));
  t.is(await count('checkout_sessions'), 1);
  t.is(await count('products'), 1);
  t.is(await count('prices'), 1);
});

test('products, customers, invoices, payment links, coupons, webhook endpoints and wallets: run again after failing past the write, each is created once and answered as created', async (t) => {
  const { merchant, count, failThenRetry } = await weirWithLaggingReadModels(t);
  const { api } = merchant;
  const cases: { path: string; body: unknown; collection: string; key: string }[] = [
    {
      path: '/api/v1/products',
      body: { name: 'Beans', defaultPriceData: { currency: 'usdc', unitAmount: '100000000' } },
      collection: 'products',
      key: 'p-1',
    },
    { path: '/api/v1/customers', body: { email: 'ada@example.com', name: 'Ada' }, collection: 'customers', key: 'c-1' },
    {
      path: '/api/v1/payment-links',
      body: { title: 'Tip jar', currency: 'usdc' },
      collection: 'payment_links',
      key: 'l-1',
    },
    {
      path: '/api/v1/coupons',
      body: { name: 'Summer', percentOff: 10, promotionCodeData: { data: [{ code: 'SUMMER10' }] } },
      collection: 'coupons',
      key: 'k-1',
    },
    {
      path: '/api/v1/webhook-endpoints',
      body: { description: 'backend', url: 'https://shop.example/hooks', enabledEvents: { events: ['*'] } },
      collection: 'webhook_endpoints',
      key: 'w-1',
    },
  ];
  const wallets = async () => (await api.get<{ id: string }[]>('/api/v1/organization/withdrawal-addresses')).body;
  const walletsBefore = (await wallets()).length;
  const wallet = await failThenRetry(
    (headers) =>
      api.post<{ id: string; address: string }>(
        '/api/v1/organization/withdrawal-addresses',
        { chainId: 7357, address: '0x2222222222222222222222222222222222222222', name: 'cold' },
        headers,
      ),
    'a-1',
  );
  t.is(wallet.status, 200, JSON.stringify(wallet.body));
  t.is(wallet.body.address, '0x2222222222222222222222222222222222222222');
  t.is((await wallets()).length, walletsBefore + 1, 'the wallet added once');
  for (const { path, body, collection, key } of cases) {
    const before = await count(collection);
    const retried = await failThenRetry((headers) => api.post<{ id: string }>(path, body, headers), key);
    t.is(retried.status, 200, `${path}: ${JSON.stringify(retried.body)}`);
    t.is(await count(collection), before + 1, `${path}: created once`);
    t.is(
      (await api.get<{ id: string }>(`${path}/${retried.body.id}`)).status,
      200,
      `${path}: answered with the record it created`,
    );
  }
  const customerId = (await api.get<{ data: { id: string }[] }>('/api/v1/customers')).body.data[0]!.id;
  const invoice = {
    customerId,
    lineItems: {
      data: [
        {
          priceData: { currency: 'usdc', unitAmount: '150000000', productData: { name: 'Consulting hour' } },
          quantity: 2,
        },
      ],
    },
    dueDate: '2030-02-01',
  };
  const invoicesBefore = await count('invoices');
  const retried = await failThenRetry(
    (headers) => api.post<{ id: string; number: string }>('/api/v1/invoices', invoice, headers),
    'i-1',
  );
  t.is(retried.status, 200, JSON.stringify(retried.body));
  t.is(await count('invoices'), invoicesBefore + 1);
  t.is((await api.get<{ number: string }>(`/api/v1/invoices/${retried.body.id}`)).body.number, retried.body.number);
});

test('an API key request run again after failing past its write is refused with a 409: the secret issued then was never shown and is not kept', async (t) => {
  const { merchant, count, failThenRetry } = await weirWithLaggingReadModels(t);
  const before = await count('api_keys');
  const retried = await failThenRetry(
    (headers) => merchant.api.post<{ code: string; message: string }>('/api/v1/api-keys', { name: 'ci' }, headers),
    'key-1',
  );
  t.is(retried.status, 409);
  t.is(retried.body.code, 'api_key_secret_not_delivered');
  t.regex(retried.body.message, /regenerate it with POST \/api\/v1\/api-keys\/[0-9a-f-]{36}\/regenerate/);
  t.is(await count('api_keys'), before + 1, 'one key, not two');
});
