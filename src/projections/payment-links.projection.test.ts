import test from 'ava';
import { sessionFixture } from '../../machines/checkout-session.fixture.ts';
import type { CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import type { PaymentLink, PaymentLinkEvent } from '../../machines/payment-link.types.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import { catalogProjection } from './catalog.projection.ts';
import { checkoutSessionsProjection } from './checkout-sessions.projection.ts';
import { createTestLog } from './test-log.ts';
import { PAYMENT_LINKS, paymentLinksProjection, type PaymentLinkDoc } from './payment-links.projection.ts';

const AT = '2026-01-01T00:00:00.000Z';
const LINK_ID = 'a0000000-0000-4000-8000-000000000001';

const link = (type: PaymentLink['type']): PaymentLink => ({
  id: LINK_ID,
  organizationId: 'org-1',
  environment: 'test',
  type,
  pricing: 'fixed',
  priceType: 'one_time',
  title: 'Portrait commission',
  description: null,
  image: null,
  tags: [],
  currency: 'usdc',
  amount: '300000000',
  priceId: 'p-1',
  productId: 'prod-1',
  interval: null,
  intervalCount: null,
  suggestedAmounts: [],
  minimumAmount: null,
  maximumAmount: null,
  nameCollection: false,
  emailCollection: false,
  phoneNumberCollection: false,
  billingAddressCollection: false,
  shippingAddressCollection: false,
  customFields: { fields: [] },
  submitType: 'pay',
  afterCompletion: 'hosted_confirmation',
  afterCompletionRedirectUrl: null,
  afterCompletionConfirmMsg: null,
  allowPromotionCodes: false,
  allowedChains: [],
  metadata: {},
  isActive: true,
  createdAt: AT,
  updatedAt: AT,
  deleted: false,
  deletedAt: null,
});

/** A little log of one payment link, the product and price it sells, and the sessions opened from it. */
function logOf() {
  const { events, append } = createTestLog(AT);
  const session = (id: string, event: CheckoutSessionEvent) => append(`checkout_session-${id}`, event);
  const tenant = { organizationId: 'org-1', environment: 'test' as const, createdAt: AT, metadata: {} };
  append('product-prod-1', {
    type: 'ProductCreated',
    data: {
      product: {
        ...tenant,
        id: 'prod-1',
        name: 'Portrait',
        description: null,
        isActive: true,
        unitLabel: null,
        url: null,
        images: [],
        visibility: 10,
        defaultPriceId: null,
      },
    },
  });
  append('price-p-1', {
    type: 'PriceCreated',
    data: {
      price: {
        ...tenant,
        id: 'p-1',
        productId: 'prod-1',
        type: 'one_time',
        currency: 'usdc',
        unitAmount: '300000000',
        interval: null,
        intervalCount: null,
        isActive: true,
        nickname: null,
        billingScheme: 'per_unit',
      },
    },
  });
  return {
    events,
    catalog: (stream: 'product-prod-1' | 'price-p-1', type: string, data: object) =>
      append(stream, { type, data: { ...data, at: AT } }),
    link: (event: PaymentLinkEvent) => append(`payment_link-${LINK_ID}`, event),
    opened: (id: string, paymentLinkId: string | null = LINK_ID) =>
      session(id, { type: 'CheckoutSessionCreated', data: { session: sessionFixture({ id, paymentLinkId }) } }),
    completed: (id: string) =>
      session(id, {
        type: 'CheckoutSessionCompleted',
        data: { amountReceived: '300000000', amountOverpaid: '0', transactionHash: null, partial: false, at: AT },
      }),
    expired: (id: string) => session(id, { type: 'CheckoutSessionExpired', data: { at: AT } }),
  };
}

/** The read models involved, in the order ALL_PROJECTIONS applies them to each event. */
async function project(events: RecordedEvent[], store: ReadStore = createEmbeddedReadStore({})) {
  for (const event of events)
    for (const projection of [catalogProjection, checkoutSessionsProjection, paymentLinksProjection])
      await projection.apply(event, store);
  return store;
}
const linkIn = async (store: ReadStore) => (await store.collection<PaymentLinkDoc>(PAYMENT_LINKS).get(LINK_ID))!;

/** Two payers open sessions on a one_time link; both pay; a third session, unrelated to the link, completes too. */
function usedOneTimeLink() {
  const log = logOf();
  log.link({ type: 'PaymentLinkCreated', data: { link: link('one_time') } });
  log.opened('s1');
  log.opened('s2');
  log.opened('s3');
  log.opened('elsewhere', null);
  log.completed('s1');
  log.expired('s3');
  log.completed('s2');
  log.completed('elsewhere');
  log.link({ type: 'PaymentLinkUpdated', data: { changes: { title: 'Portrait commission (May)' }, at: AT } });
  return log;
}

test('a one_time link counts the completed sessions opened from it; after the first it takes no new checkout', async (t) => {
  const log = logOf();
  log.link({ type: 'PaymentLinkCreated', data: { link: link('one_time') } });
  log.opened('s1');
  t.like(await linkIn(await project(log.events)), { completedPayments: 0, takesPayments: true, isActive: true });
  log.expired('s1');
  log.opened('s2');
  t.like(
    await linkIn(await project(log.events)),
    { completedPayments: 0, takesPayments: true },
    'an expired session is no payment',
  );
  log.completed('s2');
  t.like(
    await linkIn(await project(log.events)),
    { completedPayments: 1, takesPayments: false, isActive: true },
    "the merchant's switch is untouched",
  );
});

test('a session opened before the first payment still counts when it is paid; other sessions and link events leave the count alone', async (t) => {
  const doc = await linkIn(await project(usedOneTimeLink().events));
  t.like(doc, { completedPayments: 2, takesPayments: false, title: 'Portrait commission (May)' });
});

test('a batch repeated after a crash, from any event on, counts each completion once', async (t) => {
  const { events } = usedOneTimeLink();
  const once = await linkIn(await project(events));
  for (let from = 0; from < events.length; from++) {
    const repeated = await project(events.slice(from), await project(events));
    t.deepEqual(await linkIn(repeated), once, `repeating from event ${from} (${events[from]!.type})`);
  }
});

test('type and switch: a used one_time link set to multiple takes payments again with its count kept; a paid multiple link set to one_time is used up', async (t) => {
  const log = usedOneTimeLink();
  log.link({ type: 'PaymentLinkUpdated', data: { changes: { type: 'multiple' }, at: AT } });
  t.like(await linkIn(await project(log.events)), { completedPayments: 2, takesPayments: true });
  log.link({ type: 'PaymentLinkDeactivated', data: { at: AT } });
  t.like(await linkIn(await project(log.events)), { completedPayments: 2, takesPayments: false, isActive: false });
  log.link({ type: 'PaymentLinkActivated', data: { at: AT } });
  log.link({ type: 'PaymentLinkUpdated', data: { changes: { type: 'one_time' }, at: AT } });
  t.like(await linkIn(await project(log.events)), { completedPayments: 2, takesPayments: false, isActive: true });
});

test("a link takes no payments while its product or price is off or its product deleted (an earlier Weir allowed that); the merchant's switch is untouched", async (t) => {
  const log = logOf();
  log.link({ type: 'PaymentLinkCreated', data: { link: link('multiple') } });
  const shows = async (takesPayments: boolean, why: string) =>
    t.like(await linkIn(await project(log.events)), { takesPayments, isActive: true }, why);
  await shows(true, 'sold');
  log.catalog('price-p-1', 'PriceUpdated', { changes: { isActive: false } });
  await shows(false, 'price inactive');
  log.catalog('price-p-1', 'PriceUpdated', { changes: { nickname: 'Small' } });
  await shows(false, 'another change leaves it off');
  log.catalog('price-p-1', 'PriceUpdated', { changes: { isActive: true } });
  await shows(true, 'price active again');
  log.catalog('product-prod-1', 'ProductUpdated', { changes: { isActive: false } });
  await shows(false, 'product inactive');
  log.link({ type: 'PaymentLinkUpdated', data: { changes: { title: 'Portrait (new)' }, at: AT } });
  await shows(false, 'an edit of the link keeps it off');
  log.catalog('product-prod-1', 'ProductUpdated', { changes: { isActive: true } });
  await shows(true, 'product active again');
  log.catalog('product-prod-1', 'ProductDeleted', {});
  await shows(false, 'product deleted');
  const once = await linkIn(await project(log.events));
  for (let from = 0; from < log.events.length; from++) {
    const repeated = await project(log.events.slice(from), await project(log.events));
    t.deepEqual(await linkIn(repeated), once, `repeating from event ${from} (${log.events[from]!.type})`);
  }
});
