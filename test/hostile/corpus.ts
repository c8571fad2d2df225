import { randomBytes } from 'node:crypto';
import type { RecordMakers, World } from './fixtures.ts';
import type { RawResponse } from './raw-http.ts';

/**
 * Hostile sequences that once found a defect (or that the issue names), sent on every run before
 * the random stream and judged by the same checks, as a fuzzer keeps its corpus: a defect found
 * once stays covered whatever the seed. Each is a few requests in a row, the later ones aimed at
 * what the earlier ones made.
 */
export type CorpusRequest = {
  /** A route of the table, as `METHOD /path/:id`; the request goes to that path with `id` in it. */
  route: string;
  id?: string;
  /** Sent to this path instead of the route's (the route still names it in the report). */
  path?: string;
  /** Another method than the route's own. */
  method?: string;
  /** Sent as JSON, or `raw` as it is. */
  body?: unknown;
  raw?: Buffer;
  contentType?: string;
  /** The own tenant's test key (default on /api), or none. */
  key?: 'own' | 'none';
  headers?: Record<string, string>;
};

export type Hit = (request: CorpusRequest) => Promise<RawResponse>;
export type CorpusCase = { name: string; run(hit: Hit, world: World, make: RecordMakers): Promise<void> };

/** The JSON body of an answer, when it has one. */
export function answerBody<T>(response: RawResponse): T | undefined {
  if (response.kind !== 'answered') return undefined;
  try {
    return JSON.parse(response.text) as T;
  } catch {
    return undefined;
  }
}

const paymentSession = {
  mode: 'payment',
  successUrl: 'https://shop.example/thanks',
  lineItems: {
    data: [{ priceData: { currency: 'usdc', unitAmount: '150000000', productData: { name: 'x' } }, quantity: 1 }],
  },
};

/** An invoice of one line of `unitAmount`, finalized, then its pay link opened as a payer would. */
async function payInvoiceOf(hit: Hit, world: World, unitAmount: string) {
  const created = answerBody<{ id: string }>(
    await hit({
      route: 'POST /api/v1/invoices',
      body: {
        customerId: world.own.ids.customer.at(-1),
        lineItems: {
          data: [{ priceData: { currency: 'usdc', unitAmount, productData: { name: 'Consulting' } }, quantity: 1 }],
        },
      },
    }),
  );
  if (!created?.id) return;
  await hit({ route: 'POST /api/v1/invoices/:id/finalize', id: created.id });
  await hit({ route: 'GET /invoices/:id/pay', id: created.id, key: 'none' });
}

export const CORPUS: CorpusCase[] = [
  {
    name: 'methods no route has, on the API (TRACE, PROPFIND, QUERY)',
    async run(hit) {
      for (const method of ['TRACE', 'PROPFIND', 'QUERY'])
        await hit({ route: 'GET /api/v1/customers', method, headers: { 'content-length': '0' } });
    },
  },
  {
    name: 'a JSON body over 1 MiB, with a key and on a hosted page',
    async run(hit, world) {
      const big = Buffer.from(JSON.stringify({ name: 'n'.repeat(2 * 1024 * 1024) }));
      await hit({ route: 'POST /api/v1/customers', raw: big });
      await hit({
        route: 'POST /checkout/:id/payment-method',
        id: world.own.ids.session.at(-1),
        raw: big,
        key: 'none',
      });
    },
  },
  {
    name: 'a payment link form over 64 KiB',
    async run(hit, world) {
      await hit({
        route: 'POST /pay/:id',
        id: world.own.ids.paymentLink[0],
        raw: Buffer.from(`amount=5&name=${'x'.repeat(70 * 1024)}`),
        contentType: 'application/x-www-form-urlencoded',
        key: 'none',
      });
    },
  },
  {
    name: 'wallets no forwarder can be bound to (the zero address, all upper case), made the default, then a session',
    async run(hit, world) {
      const good = world.own.ids.wallet[0];
      for (const address of [
        '0x0000000000000000000000000000000000000000',
        `0x${randomBytes(20).toString('hex').toUpperCase()}`,
      ]) {
        const added = answerBody<{ id?: string }>(
          await hit({ route: 'POST /api/v1/organization/withdrawal-addresses', body: { chainId: 7357, address } }),
        );
        if (!added?.id) continue;
        await hit({ route: 'POST /api/v1/organization/withdrawal-addresses/:id/mark-as-default', id: added.id });
        await hit({ route: 'POST /api/v1/checkout/sessions', body: paymentSession });
        // The rest of the run gets its good wallet back.
        if (good) await hit({ route: 'POST /api/v1/organization/withdrawal-addresses/:id/mark-as-default', id: good });
        await hit({ route: 'DELETE /api/v1/organization/withdrawal-addresses/:id', id: added.id });
      }
    },
  },
  {
    name: 'an invoice with nothing to pay, finalized, then its pay link',
    run: (hit, world) => payInvoiceOf(hit, world, '0'),
  },
  {
    name: 'an invoice no asset can pay exactly (1e-8 USDC), finalized, then its pay link',
    run: (hit, world) => payInvoiceOf(hit, world, '1'),
  },
  {
    name: 'a promotion code in another currency, then two codes on one session',
    async run(hit, world, make) {
      const session = await make.session('payment', false);
      await make.coupon('eth');
      await hit({
        route: 'POST /checkout/:id/promotion-code',
        id: session.id,
        body: { code: world.own.codes.at(-1) },
        key: 'none',
      });
      await make.coupon('percent');
      await hit({
        route: 'POST /checkout/:id/promotion-code',
        id: session.id,
        body: { code: world.own.codes.at(-1) },
        key: 'none',
      });
      await make.coupon('usdc');
      await hit({
        route: 'POST /checkout/:id/promotion-code',
        id: session.id,
        body: { code: world.own.codes.at(-1) },
        key: 'none',
      });
    },
  },
  {
    name: 'a code that takes everything off, then a payment method and the page',
    async run(hit, world, make) {
      const session = await make.session('payment', false);
      await make.coupon('full');
      await hit({
        route: 'POST /checkout/:id/promotion-code',
        id: session.id,
        body: { code: world.own.codes.at(-1) },
        key: 'none',
      });
      await hit({
        route: 'POST /checkout/:id/payment-method',
        id: session.id,
        body: { assetId: 'weir-testnet:usdc' },
        key: 'none',
      });
      await hit({ route: 'GET /checkout/:id', id: session.id, key: 'none' });
    },
  },
  {
    name: 'a POST no route takes, and one a path does not allow, sent twice with one Idempotency-Key',
    async run(hit, world) {
      for (const [route, id] of [
        ['POST /api/v1/customers', undefined],
        ['GET /api/v1/customers/:id', world.own.ids.customer[0]],
      ] as const) {
        const key = `corpus-${randomBytes(4).toString('hex')}`;
        for (let i = 0; i < 2; i++)
          await hit({
            route,
            ...(id ? { id } : {}),
            method: 'POST',
            body: { a: 1 },
            headers: { 'idempotency-key': key },
            ...(id ? {} : { path: '/api/v1/no-such-thing' }),
          });
      }
    },
  },
];
