import test from 'ava';
import { invoiceAggregate } from '../../machines/invoice.aggregate.ts';
import { invoiceFixture } from '../../machines/invoice.fixture.ts';
import { subscriptionIdOfInvoice } from '../../machines/subscription.decide.ts';
import type { Invoice } from '../../machines/invoice.types.ts';
import { subscriptionAggregate } from '../../machines/subscription.aggregate.ts';
import { itemFixture, SUBSCRIPTION_ID, subscriptionFixture } from '../../machines/subscription.fixture.ts';
import { createCommandHandler } from '../actors/command-handler.ts';
import { createSqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { PRICES, PRODUCTS, type PriceDoc, type ProductDoc } from '../projections/catalog.projection.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import { createManualClock } from '../shared/clock.ts';
import { SUBSCRIPTION_BILLING_EFFECTS } from './subscription-billing.ts';
import { subscriptionBillingEffects } from './subscription-billing.effects.ts';
import type { WorkflowContext } from './workflow.ts';
import { priceFixture, productFixture } from '../actors/catalog.fixture.ts';
import { evolveOrganization, organizationRecordId, type Organization } from '../actors/organization.ts';
import type { Rail } from '../chain-ingest/rail.ts';
import { TEST_NETWORK } from '../chain-ingest/test-rail.ts';
import { COLLECTIONS, type OrganizationDoc } from '../projections/collections.ts';

const T0 = '2026-01-01T00:00:00.000Z';
const PERIOD_END = '2026-02-01T00:00:00.000Z';
const tenant = { organizationId: 'org-1', environment: 'test' as const };
const by = (causationId: string): WorkflowContext => ({ ...tenant, actor: 'system:subscriptions', causationId });

/** A second test network (chain 84532), so a merchant can be paid on one and not the other. */
const OTHER_CHAIN = 84_532;
/** A burn address: a wallet the chain cannot pay out to. */
const BURNT = '0x000000000000000000000000000000000000dEaD';
const rail: Pick<Rail, 'networks' | 'unpayableAddress'> = {
  networks: (environment) =>
    environment === 'test'
      ? [
          TEST_NETWORK,
          {
            ...TEST_NETWORK,
            network: 'other-testnet',
            name: 'Other Testnet',
            chainId: OTHER_CHAIN,
            assets: TEST_NETWORK.assets.map((a) => ({
              ...a,
              id: a.id.replace('weir-testnet', 'other-testnet'),
              chainId: OTHER_CHAIN,
            })),
          },
        ]
      : [],
  unpayableAddress: () => null,
};

/** The tenant's organization as its read model holds it, with a wallet on each of `chainIds` (at `address`). */
function organizationWith(
  chainIds: readonly number[],
  address = '0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65',
): OrganizationDoc {
  let org = evolveOrganization(null, {
    type: 'OrganizationCreated',
    data: { id: tenant.organizationId, environment: tenant.environment, name: 'Acme', at: T0 },
  });
  for (const chainId of chainIds)
    org = evolveOrganization(org, {
      type: 'WithdrawalAddressAdded',
      data: {
        withdrawalAddress: {
          id: `wallet-${chainId}`,
          name: 'treasury',
          address,
          chainId,
          isDefault: true,
          createdAt: T0,
          updatedAt: T0,
        },
      },
    });
  const recordId = organizationRecordId(tenant.organizationId, tenant.environment);
  return { ...(org as Organization), _id: recordId, organizationId: tenant.organizationId };
}

/** The effects over a real log and a catalog of one monthly price (`price-1` of product `prod-1`, "Pro"). */
async function billing(t: import('ava').ExecutionContext, railOf: Pick<Rail, 'networks' | 'unpayableAddress'> = rail) {
  const clock = createManualClock(Date.parse(T0));
  const eventStore = createSqliteEventStore({ path: ':memory:' });
  t.teardown(() => eventStore.close());
  const readStore = createEmbeddedReadStore({});
  const commands = createCommandHandler({ eventStore, clock });
  const product: ProductDoc = {
    _id: 'prod-1',
    ...productFixture({ ...tenant, name: 'Pro', createdAt: T0, updatedAt: T0 }),
  };
  const price: PriceDoc = {
    _id: 'price-1',
    ...priceFixture({
      ...tenant,
      type: 'recurring',
      unitAmount: '1000000000',
      interval: 'month',
      intervalCount: 1,
      createdAt: T0,
      updatedAt: T0,
    }),
  };
  await readStore.collection<ProductDoc>(PRODUCTS).put(product);
  await readStore.collection<PriceDoc>(PRICES).put(price);
  const organizations = readStore.collection<OrganizationDoc>(COLLECTIONS.organizations);
  await organizations.put(organizationWith([TEST_NETWORK.chainId]));
  const logged: { line: string; level: string | undefined }[] = [];
  const effects = subscriptionBillingEffects({
    commands,
    readStore,
    publicUrl: 'http://weir.test',
    rail: railOf,
    log: (line, fields) => logged.push({ line, level: fields?.level }),
  });
  const stream = async (id: string) =>
    (await eventStore.readStream(id)).map((e) => [e.type, e.metadata.actor, e.metadata.causationId]);
  /** A subscription started by its paid checkout session, renewed at its period end with invoice `inv-2`. */
  async function renewed(subscription = subscriptionFixture()) {
    const ctx = { ...tenant, actor: 'test' };
    await commands.handle(subscriptionAggregate, subscription.id, { type: 'CreateSubscription', subscription }, ctx);
    await commands.handle(
      subscriptionAggregate,
      subscription.id,
      { type: 'RecordSubscriptionPayment', invoiceId: 'cs-1' },
      ctx,
    );
    clock.set(Date.parse(PERIOD_END));
    await commands.handle(
      subscriptionAggregate,
      subscription.id,
      { type: 'RenewSubscription', invoiceId: 'inv-2' },
      ctx,
    );
  }
  const issue = (templateId: string | null = null) =>
    effects[SUBSCRIPTION_BILLING_EFFECTS.issueRenewal]!(
      { subscriptionId: SUBSCRIPTION_ID, invoiceId: 'inv-2', templateId },
      by('inv-2'),
    );
  return { clock, eventStore, readStore, organizations, price, commands, effects, stream, renewed, issue, logged };
}

test('a subscription session whose lines make no subscription is reported as a warning naming it, and nothing is written', async (t) => {
  const { effects, eventStore, logged } = await billing(t);
  const before = await eventStore.headPosition();
  await effects[SUBSCRIPTION_BILLING_EFFECTS.reportUnbillable]!(
    {
      checkoutSessionId: 'cs-9',
      subscriptionId: SUBSCRIPTION_ID,
      reason: 'a subscription bills recurring prices only',
    },
    by('cs-9'),
  );
  t.is(logged.length, 1);
  t.is(logged[0]!.level, 'warn');
  t.regex(
    logged[0]!.line,
    new RegExp(`cs-9 makes no subscription ${SUBSCRIPTION_ID}: a subscription bills recurring prices only`),
  );
  t.is(await eventStore.headPosition(), before);
});

test('a renewal is issued as an invoice: a number claimed, its lines named from the catalog, created and sent with its page; a second run changes nothing', async (t) => {
  const { eventStore, stream, renewed, issue } = await billing(t);
  await renewed(subscriptionFixture({ items: [itemFixture({ quantity: 2 })] }));
  await issue();
  const events = await eventStore.readStream('invoice-inv-2');
  t.deepEqual(
    events.map((e) => e.type),
    ['InvoiceCreated', 'InvoiceFinalized', 'NextRecurringInvoiceScheduled', 'InvoiceSent'],
  );
  t.like(events[0]!.data, {
    invoice: {
      number: 'INV-000001',
      subscriptionId: SUBSCRIPTION_ID,
      billingReason: 'subscription_cycle',
      customerId: 'cus-1',
      dueDate: '2026-02-04T00:00:00.000Z',
      lineItems: { data: [{ description: 'Pro', priceId: 'price-1', quantity: 2, amountTotal: '2000000000' }] },
    },
  });
  t.like(events[1]!.data, { url: 'http://weir.test/invoices/inv-2' });
  t.true(events.every((e) => e.metadata.actor === 'system:subscriptions' && e.metadata.causationId === 'inv-2'));
  const before = await stream('invoice-inv-2');
  await issue();
  t.deepEqual(await stream('invoice-inv-2'), before, 'a repeat (a redelivery, a replay of the log) does nothing');
});

test('a renewal of a series is issued as its first invoice (lines, memo, metadata); one whose subscription ended, whose draft the merchant deleted, or billed by a later renewal, is not', async (t) => {
  const series = await billing(t);
  const template = invoiceFixture({
    id: 'inv-1',
    memo: 'thanks',
    metadata: { plan: 'gold' },
    lineItems: {
      object: 'list',
      data: [{ description: 'Gold', priceId: null, quantity: 1, unitAmount: '700000000', amountTotal: '700000000' }],
    },
  });
  await series.commands.handle(
    invoiceAggregate,
    'inv-1',
    { type: 'CreateInvoice', invoice: template },
    { ...tenant, actor: 'test' },
  );
  await series.renewed();
  await series.issue('inv-1');
  t.like((await series.eventStore.readStream('invoice-inv-2'))[0]!.data, {
    invoice: {
      memo: 'thanks',
      metadata: { plan: 'gold' },
      lineItems: { data: [{ description: 'Gold', unitAmount: '700000000' }] },
    },
  });

  const ended = await billing(t);
  await ended.renewed();
  await ended.commands.handle(
    subscriptionAggregate,
    SUBSCRIPTION_ID,
    { type: 'EndSubscription', comment: null },
    { ...tenant, actor: 'test' },
  );
  await ended.issue();
  t.deepEqual(await ended.stream('invoice-inv-2'), [], 'ended as its period began (not served): not issued');

  // Ended a day into the period its renewal bills, while the issue was under way: that period was served, so
  // the renewal is owed and issued all the same (created and sent).
  const served = await billing(t);
  await served.renewed();
  served.clock.set(Date.parse(PERIOD_END) + 24 * 60 * 60 * 1000);
  await served.commands.handle(
    subscriptionAggregate,
    SUBSCRIPTION_ID,
    { type: 'EndSubscription', comment: null },
    { ...tenant, actor: 'test' },
  );
  await served.issue();
  const servedTypes = (await served.stream('invoice-inv-2')).map(([type]) => type);
  t.is(servedTypes[0], 'InvoiceCreated', 'ended after its period began: created');
  t.true(servedTypes.includes('InvoiceSent'), 'and sent');

  const deleted = await billing(t);
  await deleted.renewed();
  const draft = invoiceFixture({ id: 'inv-2', subscriptionId: SUBSCRIPTION_ID });
  const ctx = { ...tenant, actor: 'test' };
  await deleted.commands.handle(invoiceAggregate, 'inv-2', { type: 'CreateInvoice', invoice: draft }, ctx);
  await deleted.commands.handle(invoiceAggregate, 'inv-2', { type: 'DeleteInvoice' }, ctx);
  await deleted.issue();
  t.deepEqual(
    (await deleted.stream('invoice-inv-2')).map(([type]) => type),
    ['InvoiceCreated', 'InvoiceDeleted'],
    'a deleted draft stays deleted',
  );

  const later = await billing(t);
  await later.renewed();
  await later.effects[SUBSCRIPTION_BILLING_EFFECTS.issueRenewal]!(
    { subscriptionId: SUBSCRIPTION_ID, invoiceId: 'inv-older', templateId: null },
    by('inv-older'),
  );
  t.deepEqual(await later.stream('invoice-inv-older'), [], 'not the latest bill: not issued');
});

test('a renewal of a served period issued after its subscription ended announces no next invoice: its series ends with it', async (t) => {
  const served = await billing(t);
  await served.renewed();
  served.clock.set(Date.parse(PERIOD_END) + 24 * 60 * 60 * 1000);
  const ctx = { ...tenant, actor: 'test' };
  await served.commands.handle(subscriptionAggregate, SUBSCRIPTION_ID, { type: 'EndSubscription', comment: null }, ctx);
  await served.issue();
  t.deepEqual(
    (await served.stream('invoice-inv-2')).map(([type]) => type),
    ['InvoiceCreated', 'InvoiceFinalized', 'InvoiceSent'],
    'no NextRecurringInvoiceScheduled',
  );
  const invoice = (await served.commands.load(invoiceAggregate, 'inv-2', tenant)).state.context.invoice;
  t.like(invoice, { status: 'open', invoiceType: 'recurring', nextInvoice: null });
});

test('a renewal restricted to a network whose wallet was removed is not finalized: it stays a draft with the refusal recorded once, and a replay of the issue leaves it to the merchant, even once the wallet is back', async (t) => {
  const { commands, eventStore, organizations, renewed, issue, logged } = await billing(t);
  // The series' first invoice was paid on the other network, whose wallet the merchant has removed since.
  const template = invoiceFixture({ id: 'inv-1', paymentMethods: { chainIds: [OTHER_CHAIN], assetIds: [] } });
  await commands.handle(
    invoiceAggregate,
    'inv-1',
    { type: 'CreateInvoice', invoice: template },
    { ...tenant, actor: 'test' },
  );
  await renewed();
  await issue('inv-1');

  const types = async () => (await eventStore.readStream('invoice-inv-2')).map((e) => e.type);
  t.deepEqual(await types(), ['InvoiceCreated', 'InvoiceFinalizationFailed'], 'not finalized, not sent');
  const draft = (await commands.load(invoiceAggregate, 'inv-2', tenant)).state.context.invoice!;
  t.is(draft.status, 'draft');
  t.like(draft.lastFinalizationError, {
    code: 'payment_method_not_available',
    field: 'paymentMethods.chainIds[0]',
    at: PERIOD_END,
  });
  t.regex(draft.lastFinalizationError!.message, /chain 84532 has no payment method of this organization/);
  t.is(logged.length, 1);
  t.is(logged[0]!.level, 'warn');
  t.regex(logged[0]!.line, /renewal invoice inv-2 of subscription .* cannot be finalized and stays a draft/);

  await issue('inv-1');
  t.deepEqual(await types(), ['InvoiceCreated', 'InvoiceFinalizationFailed'], 'the same refusal is recorded once');

  // Another wallet list would word the refusal otherwise; a wallet back would let it pass: either
  // way the merchant finalizes it (test/api/recurring-invoices.test.ts), not a replay.
  await organizations.put(organizationWith([]));
  await issue('inv-1');
  await organizations.put(organizationWith([TEST_NETWORK.chainId, OTHER_CHAIN]));
  await issue('inv-1');
  t.deepEqual(await types(), ['InvoiceCreated', 'InvoiceFinalizationFailed'], 'left to the merchant');
  t.is(logged.length, 1);
  // Its subscription learnt, once, that the bill is a draft never sent: it does not lapse at its due date.
  const learnt = (await eventStore.readStream(`subscription-${SUBSCRIPTION_ID}`)).filter(
    (e) => e.type === 'RenewalInvoiceNotFinalized',
  );
  t.deepEqual(
    learnt.map((e) => e.data),
    [{ invoiceId: 'inv-2', at: PERIOD_END }],
  );
  t.is(
    (await commands.load(subscriptionAggregate, SUBSCRIPTION_ID, tenant)).state.context.subscription!.latestInvoice!
      .status,
    'draft',
  );
});

/** Whose wallets the merchant's organization has, and what the finalize route answers a renewal for them. */
const REFUSALS: {
  /** Which renewal, and what its draft records. */
  which: string;
  records: string;
  railOf?: Pick<Rail, 'networks' | 'unpayableAddress'>;
  organization: OrganizationDoc;
  code: string;
  message: RegExp | string;
}[] = [
  {
    which: 'of an organization with no wallet at all',
    records: 'the refusal naming the missing payment method',
    organization: organizationWith([]),
    code: 'payment_method_not_available',
    message: /no payment method \(wallet address\) in the test environment/,
  },
  {
    which: 'whose pay page would pay into a wallet failing its checksum',
    records: 'the 422 the finalize route answers',
    // One letter's case changed: the EIP-55 checksum fails (a wallet stored before Weir checked them).
    organization: organizationWith(
      [TEST_NETWORK.chainId],
      '0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65'.replace('AAf5', 'aAf5'),
    ),
    code: 'payment_method_invalid',
    message: /^cannot be finalized: the payment method wallet-7357 .* fails its EIP-55 checksum/,
  },
  {
    which: 'whose pay page could pay only into wallets the chain cannot pay out to',
    records: 'the 422 naming each wallet',
    // Every wallet is one the rail refuses (no typo): the networks are left out for it, none is left.
    railOf: { ...rail, unpayableAddress: ({ address }) => (address === BURNT ? 'is a burn address' : null) },
    organization: organizationWith([TEST_NETWORK.chainId, OTHER_CHAIN], BURNT),
    code: 'payment_method_invalid',
    message: `cannot be finalized: the payment method wallet-7357 on chain 7357 has the address ${BURNT}, which is a burn address; correct it with PUT /api/v1/organization/withdrawal-addresses/wallet-7357; the payment method wallet-84532 on chain 84532 has the address ${BURNT}, which is a burn address; correct it with PUT /api/v1/organization/withdrawal-addresses/wallet-84532`,
  },
];

for (const refusal of REFUSALS)
  test(`a renewal ${refusal.which} is not finalized: its draft records ${refusal.records}`, async (t) => {
    const { eventStore, organizations, renewed, issue } = await billing(t, refusal.railOf);
    await organizations.put(refusal.organization);
    await renewed();
    await issue();
    const events = await eventStore.readStream('invoice-inv-2');
    t.deepEqual(
      events.map((e) => e.type),
      ['InvoiceCreated', 'InvoiceFinalizationFailed'],
    );
    t.like(events[1]!.data, { code: refusal.code, field: null });
    const message = String(events[1]!.data.message);
    if (typeof refusal.message === 'string') t.is(message, refusal.message);
    else t.regex(message, refusal.message);
  });

test("a renewal's lines and a series' subscription take nothing from another tenant's catalog: a foreign product or price is read as none, not used", async (t) => {
  const { eventStore, readStore, price, commands, effects, renewed, issue } = await billing(t);
  const theirs = productFixture({ id: 'prod-theirs', organizationId: 'org-2', name: 'Theirs' });
  await readStore.collection<ProductDoc>(PRODUCTS).put({ _id: 'prod-theirs', ...theirs });
  // The same organization's live price: another environment is another tenant too.
  await readStore
    .collection<PriceDoc>(PRICES)
    .put({ ...price, _id: 'price-live', id: 'price-live', environment: 'live' });

  // A series' subscription takes its items' products from its lines' prices: the foreign price gives none.
  const ctx = { ...tenant, actor: 'test' };
  const line = {
    description: 'Pro',
    priceId: 'price-live',
    quantity: 1,
    unitAmount: '1000000000',
    amountTotal: '1000000000',
  };
  const invoice = invoiceFixture({
    id: 'inv-r',
    invoiceType: 'recurring',
    recurring: { interval: 'month', intervalCount: 1 },
    lineItems: { object: 'list', data: [line] },
  });
  await commands.handle(invoiceAggregate, 'inv-r', { type: 'CreateInvoice', invoice }, ctx);
  await commands.handle(invoiceAggregate, 'inv-r', { type: 'FinalizeInvoice', url: 'http://weir.test/pay' }, ctx);
  const subscriptionId = subscriptionIdOfInvoice('inv-r');
  await effects[SUBSCRIPTION_BILLING_EFFECTS.createFromInvoice]!({ invoiceId: 'inv-r', subscriptionId }, by('inv-r'));
  const { state } = await commands.load(subscriptionAggregate, subscriptionId, tenant);
  const [item] = state.context.subscription!.items;
  t.like(item, { priceId: 'price-live', productId: '' });
  t.is(item!.productName, undefined);

  // A renewal named from its items' products: the foreign one is not, the name kept on the item is.
  await renewed(subscriptionFixture({ items: [itemFixture({ productId: 'prod-theirs', productName: 'Ours' })] }));
  await issue();
  const [createdEvent] = await eventStore.readStream('invoice-inv-2');
  t.like(createdEvent!.data, { invoice: { lineItems: { data: [{ description: 'Ours' }] } } });
});

test('the first invoice of a recurring series creates its subscription, its items’ products (and their names, as a checkout’s subscription keeps them) from the catalog; again, or for an invoice no longer recurring, nothing', async (t) => {
  const { commands, effects, stream } = await billing(t);
  const ctx = { ...tenant, actor: 'test' };
  const create = (invoiceId: string) =>
    effects[SUBSCRIPTION_BILLING_EFFECTS.createFromInvoice]!(
      { invoiceId, subscriptionId: subscriptionIdOfInvoice(invoiceId) },
      by(invoiceId),
    );
  const line = {
    description: 'Pro',
    priceId: 'price-1',
    quantity: 3,
    unitAmount: '1000000000',
    amountTotal: '3000000000',
  };
  for (const [id, invoiceType] of [
    ['inv-r', 'recurring'],
    ['inv-o', 'one_time'],
  ] as const) {
    const invoice = invoiceFixture({
      id,
      invoiceType,
      recurring: invoiceType === 'recurring' ? { interval: 'month', intervalCount: 3 } : null,
      lineItems: { object: 'list', data: [line] },
    });
    await commands.handle(invoiceAggregate, id, { type: 'CreateInvoice', invoice }, ctx);
    await commands.handle(invoiceAggregate, id, { type: 'FinalizeInvoice', url: 'http://weir.test/pay' }, ctx);
    await create(id);
  }
  const id = subscriptionIdOfInvoice('inv-r');
  const { state } = await commands.load(subscriptionAggregate, id, tenant);
  t.like(state.context.subscription, {
    status: 'incomplete',
    intervalCount: 3,
    items: [{ priceId: 'price-1', productId: 'prod-1', productName: 'Pro', quantity: 3 }],
    latestInvoice: { id: 'inv-r', kind: 'invoice' },
  });
  t.deepEqual(await stream(`subscription-${id}`), [['SubscriptionCreated', 'system:subscriptions', 'inv-r']]);
  await create('inv-r');
  t.is((await stream(`subscription-${id}`)).length, 1, 'created once');
  t.deepEqual(await stream(`subscription-${subscriptionIdOfInvoice('inv-o')}`), [], 'a one-time invoice: none');
});

test("a series billed by a yearly price makes a subscription shown as yearly (the price's own interval, not 12 months), renewing a year on and due as many days after each renewal as its first invoice", async (t) => {
  const { commands, effects, readStore, price } = await billing(t);
  await readStore.collection<PriceDoc>(PRICES).put({ ...price, _id: 'price-y', id: 'price-y', interval: 'year' });
  const ctx = { ...tenant, actor: 'test' };
  const invoice = invoiceFixture({
    id: 'inv-y',
    invoiceType: 'recurring',
    recurring: { interval: 'month', intervalCount: 12 },
    issueDate: '2026-01-01T00:00:00.000Z',
    // Due on January 15, a date: net 14.
    dueDate: '2026-01-15T23:59:59.999Z',
    lineItems: {
      object: 'list',
      data: [
        { description: 'Pro', priceId: 'price-y', quantity: 1, unitAmount: '1000000000', amountTotal: '1000000000' },
      ],
    },
  });
  await commands.handle(invoiceAggregate, 'inv-y', { type: 'CreateInvoice', invoice }, ctx);
  await commands.handle(invoiceAggregate, 'inv-y', { type: 'FinalizeInvoice', url: 'http://weir.test/pay' }, ctx);
  const subscriptionId = subscriptionIdOfInvoice('inv-y');
  await effects[SUBSCRIPTION_BILLING_EFFECTS.createFromInvoice]!({ invoiceId: 'inv-y', subscriptionId }, by('inv-y'));
  const { state } = await commands.load(subscriptionAggregate, subscriptionId, tenant);
  t.like(state.context.subscription, {
    interval: 'year',
    intervalCount: 1,
    items: [{ priceId: 'price-y', interval: 'year', intervalCount: 1 }],
    currentPeriodEnd: '2027-01-01T00:00:00.000Z',
    daysUntilDue: 14,
  });
});

test('a renewal created and then finalized by the merchant while its send waited for a retry is still sent, once', async (t) => {
  const { commands, stream, renewed, issue } = await billing(t);
  await renewed();
  const ctx = { ...tenant, actor: 'merchant' };
  const draft = invoiceFixture({ id: 'inv-2', subscriptionId: SUBSCRIPTION_ID });
  await commands.handle(invoiceAggregate, 'inv-2', { type: 'CreateInvoice', invoice: draft }, ctx);
  await commands.handle(invoiceAggregate, 'inv-2', { type: 'FinalizeInvoice', url: 'http://weir.test/pay' }, ctx);
  await issue();
  const sent = (await stream('invoice-inv-2')).filter(([type]) => type === 'InvoiceSent');
  t.deepEqual(sent, [['InvoiceSent', 'system:subscriptions', 'inv-2']]);
  await issue();
  t.is((await stream('invoice-inv-2')).filter(([type]) => type === 'InvoiceSent').length, 1, 'sent once');
});

test('the upgrade to billing v5: a renewal draft an older Weir refused (InvoiceFinalizationFailed) while its subscription kept the bill open (no RenewalInvoiceNotFinalized): the issue the workflow runs again records RenewalInvoiceNotFinalized once, leaving the draft as it is', async (t) => {
  const restricted = invoiceFixture({ id: 'inv-1', paymentMethods: { chainIds: [OTHER_CHAIN], assetIds: [] } });
  const ctx = { ...tenant, actor: 'test' };
  // What the older Weir's issue recorded on the invoice: the draft and its refusal (taken from an issue now).
  const source = await billing(t);
  await source.commands.handle(invoiceAggregate, 'inv-1', { type: 'CreateInvoice', invoice: restricted }, ctx);
  await source.renewed();
  await source.issue('inv-1');
  const [createdEvent, failedEvent] = await source.eventStore.readStream('invoice-inv-2');
  const draft = (createdEvent!.data as { invoice: Invoice }).invoice;
  const { code, field, message } = failedEvent!.data as { code: string; field: string | null; message: string };

  const { commands, eventStore, renewed, issue } = await billing(t);
  await commands.handle(invoiceAggregate, 'inv-1', { type: 'CreateInvoice', invoice: restricted }, ctx);
  await renewed();
  await commands.handle(invoiceAggregate, 'inv-2', { type: 'CreateInvoice', invoice: draft }, by('inv-2'));
  const failure = { type: 'RecordInvoiceFinalizationFailure' as const, code, field, message };
  await commands.handle(invoiceAggregate, 'inv-2', failure, by('inv-2'));
  const bill = async () =>
    (await commands.load(subscriptionAggregate, SUBSCRIPTION_ID, tenant)).state.context.subscription!.latestInvoice!;
  t.is((await bill()).status, 'open', 'as the older Weir left it: it would lapse at its due date');

  await issue('inv-1');
  await issue('inv-1');
  const learnt = (await eventStore.readStream(`subscription-${SUBSCRIPTION_ID}`)).filter(
    (e) => e.type === 'RenewalInvoiceNotFinalized',
  );
  t.deepEqual(
    learnt.map((e) => e.data),
    [{ invoiceId: 'inv-2', at: PERIOD_END }],
    'recorded once',
  );
  t.is((await bill()).status, 'draft');
  t.deepEqual(
    (await eventStore.readStream('invoice-inv-2')).map((e) => e.type),
    ['InvoiceCreated', 'InvoiceFinalizationFailed'],
    'neither finalized nor refused again',
  );
});
