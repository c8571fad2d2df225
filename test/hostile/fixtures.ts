import { randomBytes } from 'node:crypto';
import type { ExecutionContext } from 'ava';
import type { Weir } from '../../src/app/start-weir.ts';
import { type Clock, createManualClock } from '../../src/shared/clock.ts';
import { payInFull, type Session } from '../api/helpers.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import { ADMIN_TOKEN, createMerchant, startTestWeir } from '../support/weir-harness.ts';
import { evmDerivedTestRail } from './evm-test-rail.ts';

/** The kinds of record a path's `:id` can name. */
export const KINDS = [
  'session',
  'paymentIntent',
  'invoice',
  'subscription',
  'customer',
  'product',
  'price',
  'coupon',
  'taxRate',
  'paymentLink',
  'webhookEndpoint',
  'apiKey',
  'wallet',
  'chain',
  'asset',
  'user',
  'invite',
] as const;
export type Kind = (typeof KINDS)[number];

/**
 * The records of one organization and environment the suite aims at. `marker` is in the name or
 * email of each of them, so a body that shows any of them to another tenant is recognised.
 */
export type TenantRecords = {
  label: string;
  key: string;
  organizationId: string;
  environment: 'test' | 'live';
  ids: Record<Kind, string[]>;
  /** Promotion codes of its coupons. */
  codes: string[];
  /** Prices by use: one-time, recurring, and a one-time price of zero. */
  oneTimePrices: string[];
  recurringPrices: string[];
  zeroPrices: string[];
  /** Webhook deliveries of its endpoints. */
  deliveries: string[];
  marker: string;
};

export type World = {
  /** The organization and environment the hostile requests act on (organization A, test). */
  own: TenantRecords;
  /** The same organization's live environment. */
  otherEnv: TenantRecords;
  /** Another organization (B, test). */
  foreign: TenantRecords;
  /** B's live environment. */
  foreignLive: TenantRecords;
  adminToken: string;
};

type Api = ReturnType<typeof apiClient>;

const emptyIds = (): Record<Kind, string[]> =>
  Object.fromEntries(KINDS.map((kind) => [kind, [] as string[]])) as unknown as Record<Kind, string[]>;

export const randomEvmAddress = () => `0x${randomBytes(20).toString('hex')}`;
const randomCode = (prefix: string) => `${prefix}${randomBytes(4).toString('hex').toUpperCase()}`;

/** POST or PUT that must succeed: its body, or an error naming the request. */
async function must<T>(response: Promise<{ status: number; body: unknown }>, what: string): Promise<T> {
  const answer = await response;
  if (answer.status !== 200) throw new Error(`fixture ${what}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body as T;
}

/**
 * Makers of one record of each kind for a tenant, through the API as a merchant would. The
 * hostile run uses them again to replace what its own requests deleted. Invites are the
 * organization's and a test key may not send them: `teamApi` is its live key's client.
 */
export function recordMakers(api: Api, tenant: TenantRecords, clock: Clock, teamApi: Api = api) {
  const { marker } = tenant;
  const add = (kind: Kind, id: string) => {
    tenant.ids[kind].push(id);
    return id;
  };
  const product = async (recurring = false, unitAmount = '250000000') => {
    const made = await must<{ id: string; defaultPrice: { id: string } }>(
      api.post('/api/v1/products', {
        name: `${marker} ${recurring ? 'plan' : 'product'}`,
        description: 'a product of the hostile suite',
        defaultPriceData: {
          currency: 'usdc',
          unitAmount,
          ...(recurring ? { type: 'recurring', interval: 'month', intervalCount: 1 } : {}),
        },
        metadata: { suite: 'hostile' },
      }),
      'product',
    );
    add('product', made.id);
    add('price', made.defaultPrice.id);
    (recurring ? tenant.recurringPrices : unitAmount === '0' ? tenant.zeroPrices : tenant.oneTimePrices).push(
      made.defaultPrice.id,
    );
    return made.id;
  };
  const customer = async () =>
    add(
      'customer',
      (
        await must<{ id: string }>(
          api.post('/api/v1/customers', {
            email: `${marker.toLowerCase()}-${randomBytes(3).toString('hex')}@example.com`,
            name: `${marker} customer`,
            phone: '+4915112345678',
            address: { line1: '1 Main St', city: 'Berlin', postalCode: '10115', country: 'DE' },
            metadata: { suite: 'hostile' },
          }),
          'customer',
        )
      ).id,
    );
  /** `full` takes everything off; `over` more than any of the suite's totals. */
  const coupon = async (kind: 'percent' | 'usdc' | 'eth' | 'once' | 'full' | 'over') => {
    const code = randomCode(kind.toUpperCase());
    const off =
      kind === 'percent' || kind === 'once'
        ? { percentOff: 15 }
        : kind === 'full'
          ? { percentOff: 100 }
          : kind === 'over'
            ? { amountOff: '9999999999999900', currency: 'usdc' }
            : { amountOff: kind === 'usdc' ? '50000000' : '1000000', currency: kind };
    const made = await must<{ id: string }>(
      api.post('/api/v1/coupons', {
        name: `${marker} ${kind} coupon`,
        ...off,
        ...(kind === 'once' ? { maxRedemptions: 1 } : {}),
        redeemBy: new Date(clock.now() + 90 * 24 * 3600_000).toISOString(),
        promotionCodeData: { data: [{ code }] },
      }),
      'coupon',
    );
    tenant.codes.push(code);
    return add('coupon', made.id);
  };
  /** `catalog`: a line of a catalog price as well (a run's later sessions do without: its requests may have deactivated it). */
  const session = async (mode: 'payment' | 'subscription' = 'payment', catalog = true) => {
    const customerId = tenant.ids.customer[0];
    const made = await must<Session & { subscriptionId: string | null }>(
      api.post('/api/v1/checkout/sessions', {
        mode,
        successUrl: 'https://shop.example/thanks?session={CHECKOUT_SESSION_ID}',
        cancelUrl: 'https://shop.example/cart',
        allowPromotionCodes: true,
        clientReferenceId: marker,
        ...(mode === 'subscription'
          ? { lineItems: { data: [{ priceId: tenant.recurringPrices[0], quantity: 1 }] }, customerId }
          : {
              lineItems: {
                data: [
                  ...(catalog ? [{ priceId: tenant.oneTimePrices[0], quantity: 2 }] : []),
                  {
                    priceData: { currency: 'usdc', unitAmount: '120000000', productData: { name: marker } },
                    quantity: 1,
                  },
                ],
              },
            }),
      }),
      `${mode} session`,
    );
    add('session', made.id);
    add('paymentIntent', (made as unknown as { paymentIntent: { id: string } }).paymentIntent.id);
    if (made.subscriptionId) {
      const subscriptionId = made.subscriptionId;
      await eventually(
        async () => ((await api.get(`/api/v1/subscriptions/${subscriptionId}`)).status === 200 ? true : undefined),
        'the subscription of a fixture session',
      );
      add('subscription', subscriptionId);
    }
    return made;
  };
  const invoice = async (then: 'draft' | 'finalize' | 'pay' | 'void' = 'draft', catalog = true) => {
    const made = await must<{ id: string }>(
      api.post('/api/v1/invoices', {
        customerId: tenant.ids.customer[0],
        lineItems: {
          data: [
            ...(catalog ? [{ priceId: tenant.oneTimePrices[0], quantity: 1 }] : []),
            { priceData: { currency: 'usdc', unitAmount: '99000000', productData: { name: marker } }, quantity: 3 },
          ],
        },
        memo: `${marker} invoice`,
        daysUntilDue: 14,
      }),
      'invoice',
    );
    if (then !== 'draft') await must(api.post(`/api/v1/invoices/${made.id}/finalize`), 'invoice finalize');
    if (then === 'pay' || then === 'void')
      await must(api.post(`/api/v1/invoices/${made.id}/${then}`), `invoice ${then}`);
    return add('invoice', made.id);
  };
  const paymentLink = async (pricing: 'fixed' | 'variable' | 'subscription' | 'once') => {
    const body =
      pricing === 'fixed'
        ? { amount: '2500000000', currency: 'usdc', allowPromotionCodes: true }
        : pricing === 'variable'
          ? {
              currency: 'usdc',
              minimumAmount: '100000000',
              maximumAmount: '100000000000',
              suggestedAmounts: ['500000000'],
              nameCollection: true,
              emailCollection: true,
              phoneNumberCollection: true,
              billingAddressCollection: true,
              shippingAddressCollection: true,
              customFields: {
                fields: [
                  { key: 'company', type: 'text', label: 'Company', optional: true, text: { maximumLength: 40 } },
                  { key: 'seats', type: 'numeric', label: 'Seats', numeric: { minimum: '1', maximum: '99' } },
                  {
                    key: 'size',
                    type: 'dropdown',
                    label: 'Size',
                    dropdown: {
                      options: [
                        { label: 'Small', value: 's' },
                        { label: 'Large', value: 'l' },
                      ],
                    },
                  },
                ],
              },
            }
          : pricing === 'subscription'
            ? { priceId: tenant.recurringPrices[0] }
            : { type: 'one_time', priceId: tenant.oneTimePrices[0] };
    const made = await must<{ id: string }>(
      api.post('/api/v1/payment-links', { title: `${marker} ${pricing} link`, ...body }),
      `${pricing} payment link`,
    );
    return add('paymentLink', made.id);
  };
  const webhookEndpoint = async () => {
    const made = await must<{ id: string }>(
      api.post('/api/v1/webhook-endpoints', {
        description: `${marker} endpoint`,
        url: 'https://hooks.example/weir',
        enabledEvents: { events: ['checkout_session.completed', 'invoice.paid', 'customer.subscription.created'] },
      }),
      'webhook endpoint',
    );
    return add('webhookEndpoint', made.id);
  };
  const taxRate = async (type: 'exclusive' | 'inclusive') =>
    add(
      'taxRate',
      (
        await must<{ id: string }>(
          api.post('/api/v1/tax-rates', {
            name: `${marker} ${type} tax`,
            percentage: type === 'exclusive' ? 8.25 : 19,
            type,
          }),
          'tax rate',
        )
      ).id,
    );
  const apiKey = async () =>
    add('apiKey', (await must<{ id: string }>(api.post('/api/v1/api-keys', { name: `${marker} key` }), 'api key')).id);
  const wallet = async () =>
    add(
      'wallet',
      (
        await must<{ id: string }>(
          api.post('/api/v1/organization/withdrawal-addresses', {
            chainId: 7357,
            address: randomEvmAddress(),
            name: `${marker} wallet`,
          }),
          'wallet',
        )
      ).id,
    );
  const invite = async () =>
    add(
      'invite',
      (
        await must<{ id: string }>(
          teamApi.post('/api/v1/invites', {
            email: `${marker.toLowerCase()}-${randomBytes(3).toString('hex')}@example.com`,
            role: 'developer',
          }),
          'invite',
        )
      ).id,
    );
  return { product, customer, coupon, taxRate, session, invoice, paymentLink, webhookEndpoint, apiKey, wallet, invite };
}

export type RecordMakers = ReturnType<typeof recordMakers>;

/** One of each kind the environment allows (live has no network here, so no wallet, session or invoice). */
async function populate(
  weir: Pick<Weir, 'url' | 'bus'>,
  api: Api,
  tenant: TenantRecords,
  clock: Clock,
  full: boolean,
  teamApi: Api = api,
) {
  const make = recordMakers(api, tenant, clock, teamApi);
  const chains = (await api.get<{ data: { id: number; assets: { id: string }[] }[] }>('/api/v1/chains')).body.data;
  tenant.ids.chain.push(...chains.map((c) => String(c.id)));
  tenant.ids.asset.push(...chains.flatMap((c) => c.assets.map((a) => a.id)));
  tenant.ids.user.push(...(await api.get<{ id: string }[]>('/api/v1/users')).body.map((u) => u.id));
  await make.invite();
  await make.product();
  await make.product(true);
  await make.customer();
  await make.coupon('percent');
  await make.coupon('usdc');
  await make.taxRate('exclusive');
  await make.taxRate('inclusive');
  await make.webhookEndpoint();
  await make.apiKey();
  await make.paymentLink('fixed');
  if (!full) return make;
  const wallets = (await api.get<{ id: string }[]>('/api/v1/organization/withdrawal-addresses')).body;
  tenant.ids.wallet.push(...wallets.map((w) => w.id));
  await make.wallet();
  await make.product(false, '0');
  await make.customer();
  await make.coupon('eth');
  await make.coupon('once');
  await make.coupon('full');
  await make.coupon('over');
  await make.paymentLink('variable');
  await make.paymentLink('subscription');
  await make.paymentLink('once');
  await make.apiKey();
  await make.invoice('draft');
  await make.invoice('finalize');
  await make.invoice('pay');
  await make.invoice('void');
  await make.session();
  await make.session();
  await make.session('subscription');
  // A subscription that has been paid for, so the routes of an active one are reached too.
  const paid = await make.session('subscription');
  await payInFull(weir, api, paid);
  const endpoint = tenant.ids.webhookEndpoint[0]!;
  await must(api.post(`/api/v1/webhook-endpoints/${endpoint}/test`), 'test webhook');
  const deliveries = await eventually(async () => {
    const page = (await api.get<{ data: { id: string }[] }>(`/api/v1/webhook-endpoints/${endpoint}/deliveries`)).body;
    return page.data.length > 0 ? page.data : undefined;
  }, 'the test delivery');
  tenant.deliveries.push(...deliveries.map((d) => d.id));
  return make;
}

const tenantRecords = (
  label: string,
  key: string,
  organizationId: string,
  environment: 'test' | 'live',
): TenantRecords => ({
  label,
  key,
  organizationId,
  environment,
  ids: emptyIds(),
  codes: [],
  oneTimePrices: [],
  recurringPrices: [],
  zeroPrices: [],
  deliveries: [],
  marker: `${label.replace(/\W/g, '')}${randomBytes(3).toString('hex')}`,
});

/**
 * Two organizations, each with test and live records of every kind their environment allows,
 * made through the API. Organization A's test environment is the one under attack; the others
 * supply the ids a request must never reach with A's test key.
 */
export async function buildWorld(weir: Pick<Weir, 'url' | 'bus'>, clock: Clock): Promise<World> {
  const a = await createMerchant(weir.url, 'Hostile Suite A');
  const b = await createMerchant(weir.url, 'Hostile Suite B');
  const own = tenantRecords('OrgA test', a.testSecretKey, a.organizationId, 'test');
  const otherEnv = tenantRecords('OrgA live', a.liveSecretKey, a.organizationId, 'live');
  const foreign = tenantRecords('OrgB test', b.testSecretKey, b.organizationId, 'test');
  const foreignLive = tenantRecords('OrgB live', b.liveSecretKey, b.organizationId, 'live');
  await populate(weir, a.api, own, clock, true, a.live);
  await populate(weir, a.live, otherEnv, clock, false);
  await populate(weir, b.api, foreign, clock, true, b.live);
  await populate(weir, b.live, foreignLive, clock, false);
  return { own, otherEnv, foreign, foreignLive, adminToken: ADMIN_TOKEN };
}

/**
 * The Weir the hostile tests run against, in process, with its world of records. The clock only
 * moves when told, so no expiry, renewal or retry fires during a run and the background stays
 * quiet (what it still does is a `system:*` actor's, never counted against a request); webhooks
 * are answered at once; deposit addresses are derived as on EVM networks.
 */
export async function startHostileWeir(t: ExecutionContext) {
  const clock = createManualClock(Date.parse('2026-03-01T09:00:00Z'));
  const weir = await startTestWeir(
    t,
    { rateLimits: false },
    {
      clock,
      rails: [evmDerivedTestRail()],
      webhookSender: async () => ({ statusCode: 200, error: null, durationMs: 1 }),
    },
  );
  return { clock, weir, world: await buildWorld(weir, clock) };
}
