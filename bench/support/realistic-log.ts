/**
 * Writes a realistic Weir log into an event store by driving the real write side: organizations,
 * API keys, wallets and webhook endpoints through their aggregates; checkout sessions through the
 * real session creator (request validation, line items, products and prices, deposit addresses);
 * payments as the matcher sends them (select, detect, confirm, reorg withdrawals, partial and late
 * payments); expiries as the timer runner sends them; cancellations as the API does; and webhook
 * delivery attempts (some failing, then retried) as the dispatcher records them, for the
 * deliveries the real projections scheduled. Time comes from a manual clock, so every event is
 * well ordered and every expiry is legal.
 */
import { randomBytes } from 'node:crypto';
import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import type { CheckoutSessionCommand } from '../../machines/checkout-session.decide.ts';
import type { CheckoutSession, SessionAddress, SessionPayment } from '../../machines/checkout-session.types.ts';
import { webhookDeliveryAggregate } from '../../machines/webhook-delivery.aggregate.ts';
import { createCommandHandler, type CommandContext } from '../../src/actors/command-handler.ts';
import { noGasFees } from '../../src/chain-ingest/gas-fee.ts';
import { createCheckoutSessionCreator } from '../../src/actors/create-checkout-session.ts';
import { createLineItemResolver } from '../../src/actors/line-items.ts';
import { organizationAggregate, organizationRecordId } from '../../src/actors/organization.ts';
import { webhookEndpointAggregate } from '../../src/actors/webhook-endpoint.ts';
import { transferId } from '../../src/chain-ingest/chain-messages.ts';
import { createTestRail, TEST_NETWORK } from '../../src/chain-ingest/test-rail.ts';
import type { Environment, EventStore } from '../../src/event-store/event-store.ts';
import { ALL_PROJECTIONS, INDEXED_FIELDS } from '../../src/projections/all-projections.ts';
import { COLLECTIONS, type WebhookDeliveryDoc } from '../../src/projections/collections.ts';
import { createProjectionRunner } from '../../src/projections/projection-runner.ts';
import { createEmbeddedReadStore } from '../../src/read-store/embedded-read-store.ts';
import type { ReadStore } from '../../src/read-store/read-store.ts';
import { CheckoutSessionCreate } from '../../src/read-api/schema/checkout-session-create.ts';
import { parseWith } from '../../src/read-api/schema/route.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { newId } from '../../src/shared/ids.ts';
import { toChainUnits } from '../../src/shared/money.ts';
import { createOrganization } from '../../src/tenancy/create-organization.ts';
import { createSecretBox, generateWebhookSecret } from '../../src/tenancy/secrets.ts';

export type RealisticLogOptions = {
  eventStore: EventStore;
  /** Stop starting new sessions once the log holds this many events (the last round still finishes). */
  targetEvents: number;
  organizations?: number;
  sessionsPerRound?: number;
  seed?: number;
  onProgress?: (events: number) => void;
  /**
   * The read store the projections keep up to date while the log is written (they follow it live,
   * as in `weir serve`). Default: a fresh embedded store, closed at the end; one given here is left
   * open, holding the read models as they were built live (to compare with a rebuild).
   */
  readStore?: ReadStore;
};

export type RealisticLogSummary = {
  events: number;
  organizations: number;
  sessions: number;
  outcomes: Record<SessionFate, number>;
  deliveryAttempts: number;
  eventTypes: Record<string, number>;
};

type SessionFate =
  | 'paid'
  | 'paid_after_reorg'
  | 'partial_then_paid'
  | 'overpaid'
  | 'expired'
  | 'expired_then_late_payment'
  | 'canceled';

/** Shares of session fates, in percent. */
const FATES: [SessionFate, number][] = [
  ['paid', 52],
  ['paid_after_reorg', 3],
  ['partial_then_paid', 8],
  ['overpaid', 2],
  ['expired', 25],
  ['expired_then_late_payment', 2],
  ['canceled', 8],
];

/** A small deterministic generator, so every run writes the same kind of log. */
const createRandom = (seed: number) => {
  let state = seed >>> 0;
  return (n: number): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return (state >>> 8) % n;
  };
};

const hex = (bytes: number) => `0x${randomBytes(bytes).toString('hex')}`;

const PRODUCT_NAMES = [
  'Weir T-shirt',
  'Annual plan',
  'Sticker pack',
  'Coffee beans 1 kg',
  'Conference ticket',
  'E-book: Stablecoins',
  'Hoodie',
  'Consulting hour',
];

export async function writeRealisticLog(options: RealisticLogOptions): Promise<RealisticLogSummary> {
  const { eventStore, targetEvents } = options;
  const organizationCount = options.organizations ?? 25;
  const sessionsPerRound = options.sessionsPerRound ?? 200;
  const random = createRandom(options.seed ?? 20260301);
  const chance = (percent: number) => random(100) < percent;

  const clock = createManualClock(Date.parse('2026-03-01T08:00:00.000Z'));
  const tick = (ms: number) => clock.advanceBy(ms);
  const readStore = options.readStore ?? createEmbeddedReadStore({ indexedFields: INDEXED_FIELDS, writes: 'trusted' });
  const commands = createCommandHandler({ eventStore, clock });
  const projections = createProjectionRunner({ eventStore, readStore, projections: ALL_PROJECTIONS });
  await projections.start();
  const caughtUp = async () => {
    const head = await eventStore.headPosition();
    if (head !== null) await projections.waitFor(head, 120_000);
    return head === null ? 0 : Number(head);
  };
  const rail = createTestRail();
  const lineItems = createLineItemResolver({ readStore, commands, rail });
  const createSession = createCheckoutSessionCreator({
    clock,
    readStore,
    commands,
    rail,
    lineItems,
    publicUrl: 'https://pay.example.com',
    gasFees: noGasFees,
  });
  const secretBox = createSecretBox(randomBytes(32));
  const deliveries = readStore.collection<WebhookDeliveryDoc>(COLLECTIONS.webhookDeliveries);

  // Merchants: organization (test and live), API keys, a wallet on the test network, branding,
  // business details, and one or two webhook endpoints.
  type Merchant = { organizationId: string; actor: string; ctx: CommandContext; priceIds: string[] };
  const merchants: Merchant[] = [];
  for (let i = 0; i < organizationCount; i++) {
    const created = await createOrganization(commands, `Shop ${i + 1}`);
    const environment: Environment = 'test';
    const actor = `api_key:${created.keys.test.id}`;
    const ctx: CommandContext = { organizationId: created.organizationId, environment, actor };
    const orgId = organizationRecordId(created.organizationId, environment);
    tick(5_000);
    await commands.handle(
      organizationAggregate,
      orgId,
      {
        type: 'UpdateBusinessDetails',
        changes: {
          email: `billing@shop${i + 1}.example`,
          websiteUrl: `https://shop${i + 1}.example`,
          supportEmail: `help@shop${i + 1}.example`,
        },
      },
      ctx,
    );
    await commands.handle(
      organizationAggregate,
      orgId,
      { type: 'AddWithdrawalAddress', id: newId(), name: 'treasury', address: hex(20), chainId: TEST_NETWORK.chainId },
      ctx,
    );
    if (chance(30))
      await commands.handle(
        organizationAggregate,
        orgId,
        {
          type: 'AddWithdrawalAddress',
          id: newId(),
          name: 'cold storage',
          address: hex(20),
          chainId: TEST_NETWORK.chainId,
        },
        ctx,
      );
    await commands.handle(
      organizationAggregate,
      orgId,
      { type: 'UpdateBranding', brandColor: '#1a7f5a', brandLogo: `https://shop${i + 1}.example/logo.png` },
      ctx,
    );
    const endpoints = chance(30) ? 2 : 1;
    for (let e = 0; e < endpoints; e++) {
      const id = newId();
      await commands.handle(
        webhookEndpointAggregate,
        id,
        {
          type: 'CreateWebhookEndpoint',
          endpoint: {
            id,
            organizationId: created.organizationId,
            environment,
            description: e === 0 ? 'order service' : 'accounting',
            url: `https://shop${i + 1}.example/hooks/${e === 0 ? 'weir' : 'accounting'}`,
            sealedSecret: secretBox.seal(generateWebhookSecret()),
            isDisabled: false,
            enabledEvents: { events: e === 0 ? ['*'] : ['checkout_session.completed', 'payment_intent.succeeded'] },
          },
        },
        ctx,
      );
    }
    merchants.push({ organizationId: created.organizationId, actor, ctx, priceIds: [] });
  }
  await caughtUp();

  const sessionBody = (merchant: Merchant, currency: 'usdc' | 'dai', order: number): Record<string, unknown> => {
    const unitAmount = String((5 + random(495)) * 1_000_000);
    const quantity = 1 + random(3);
    const usePrice = merchant.priceIds.length > 0 && currency === 'usdc' && chance(70);
    const item = usePrice
      ? { priceId: merchant.priceIds[random(merchant.priceIds.length)], quantity }
      : {
          priceData: {
            currency,
            unitAmount,
            productData: { name: PRODUCT_NAMES[random(PRODUCT_NAMES.length)], description: 'Shipped in 2 to 4 days' },
          },
          quantity,
        };
    return {
      mode: 'payment',
      successUrl: 'https://shop.example/thanks?session={CHECKOUT_SESSION_ID}',
      cancelUrl: 'https://shop.example/cart',
      clientReferenceId: `order-${order}`,
      metadata: { orderId: `o-${order}`, channel: chance(50) ? 'web' : 'mobile' },
      lineItems: { data: [item] },
    };
  };

  const summary: RealisticLogSummary = {
    events: 0,
    organizations: organizationCount,
    sessions: 0,
    outcomes: {
      paid: 0,
      paid_after_reorg: 0,
      partial_then_paid: 0,
      overpaid: 0,
      expired: 0,
      expired_then_late_payment: 0,
      canceled: 0,
    },
    deliveryAttempts: 0,
    eventTypes: {},
  };

  const pickFate = (): SessionFate => {
    let roll = random(100);
    for (const [fate, share] of FATES) {
      if (roll < share) return fate;
      roll -= share;
    }
    return 'paid';
  };

  let block = 1_000_000;
  const matcher = (merchant: Merchant, session: CheckoutSession, command: CheckoutSessionCommand) =>
    commands.handle(checkoutSessionAggregate, session.id, command, {
      organizationId: merchant.organizationId,
      environment: 'test',
      actor: 'system:matcher',
      causationId: newId(),
    });
  /** A transfer of `amount` (10^8 scale) to the session's address, as the matcher records it. */
  const transfer = (
    address: SessionAddress,
    amount: bigint,
  ): Omit<SessionPayment, 'status' | 'detectedAt' | 'confirmedAt' | 'late'> => {
    const transactionHash = hex(32);
    const logIndex = random(40);
    block += 1 + random(3);
    return {
      transferId: transferId({ network: address.network, transactionHash, logIndex }),
      network: address.network,
      chainId: address.asset.chainId,
      transactionHash,
      logIndex,
      blockNumber: block,
      blockHash: hex(32),
      fromAddress: hex(20),
      toAddress: address.paymentAddress,
      asset: address.asset,
      amountRaw: toChainUnits(amount, address.asset.decimals).toString(),
      amount: amount.toString(),
    };
  };
  /** The payer picks the asset, the transfer is seen, then final. */
  const pay = async (merchant: Merchant, session: CheckoutSession, address: SessionAddress, amount: bigint) => {
    const payment = transfer(address, amount);
    tick(10_000 + random(30_000));
    await matcher(merchant, session, { type: 'RecordTransfer', payment });
    tick(12_000 * (1 + random(5)));
    await matcher(merchant, session, { type: 'ConfirmTransfer', transferId: payment.transferId });
  };

  let order = 0;
  while ((await caughtUp()) < targetEvents) {
    const toExpire: { merchant: Merchant; session: CheckoutSession; late: boolean }[] = [];
    for (let s = 0; s < sessionsPerRound; s++) {
      const merchant = merchants[random(merchants.length)]!;
      const currency = chance(80) ? 'usdc' : 'dai';
      tick(1_000 + random(5_000));
      const { session } = await createSession(
        parseWith(CheckoutSessionCreate, sessionBody(merchant, currency, ++order)),
        {
          organizationId: merchant.organizationId,
          environment: 'test',
          actor: merchant.actor,
        },
      );
      summary.sessions++;
      // A created price becomes reusable once the catalog projection has it.
      const priceId = session.lineItems.data[0]?.price.id;
      if (priceId && merchant.priceIds.length < 12 && !merchant.priceIds.includes(priceId) && currency === 'usdc') {
        await caughtUp();
        merchant.priceIds.push(priceId);
      }
      const fate = pickFate();
      summary.outcomes[fate]++;
      const address = session.addresses[0]!;
      const total = BigInt(session.amountTotal);
      if (fate === 'expired' || fate === 'expired_then_late_payment') {
        if (chance(60))
          await commands.handle(
            checkoutSessionAggregate,
            session.id,
            { type: 'SelectPaymentMethod', addressId: address.id },
            { organizationId: merchant.organizationId, environment: 'test', actor: 'system:hosted-checkout' },
          );
        toExpire.push({ merchant, session, late: fate === 'expired_then_late_payment' });
        continue;
      }
      if (fate === 'canceled') {
        tick(60_000);
        await commands.handle(
          checkoutSessionAggregate,
          session.id,
          { type: 'CancelCheckoutSession', reason: 'canceled by the merchant' },
          merchant.ctx,
        );
        continue;
      }
      tick(20_000);
      await commands.handle(
        checkoutSessionAggregate,
        session.id,
        { type: 'SelectPaymentMethod', addressId: address.id },
        { organizationId: merchant.organizationId, environment: 'test', actor: 'system:hosted-checkout' },
      );
      if (fate === 'paid_after_reorg') {
        const orphaned = transfer(address, total);
        await matcher(merchant, session, { type: 'RecordTransfer', payment: orphaned });
        tick(15_000);
        await matcher(merchant, session, {
          type: 'WithdrawTransfer',
          transferId: orphaned.transferId,
          reason: 'reorg',
        });
        await pay(merchant, session, address, total);
      } else if (fate === 'partial_then_paid') {
        const first = (total / 2n / 1_000_000n) * 1_000_000n;
        await pay(merchant, session, address, first);
        tick(120_000);
        await commands.handle(
          checkoutSessionAggregate,
          session.id,
          { type: 'SelectPaymentMethod', addressId: address.id },
          { organizationId: merchant.organizationId, environment: 'test', actor: 'system:hosted-checkout' },
        );
        await pay(merchant, session, address, total - first);
      } else if (fate === 'overpaid') {
        await pay(merchant, session, address, total);
        await pay(merchant, session, address, 1_000_000n);
      } else {
        await pay(merchant, session, address, total);
      }
    }

    // An hour later the timer runner expires what was left open; a few payers pay late anyway.
    tick(61 * 60_000);
    for (const { merchant, session, late } of toExpire) {
      await commands.handle(
        checkoutSessionAggregate,
        session.id,
        { type: 'ExpireCheckoutSession' },
        { organizationId: merchant.organizationId, environment: 'test', actor: 'system:timer' },
      );
      if (late) await pay(merchant, session, session.addresses[0]!, BigInt(session.amountTotal));
    }

    // The dispatcher: every due delivery gets an attempt; about one in ten fails and is retried later.
    for (let pass = 0; pass < 4; pass++) {
      await caughtUp();
      const due = await deliveries.find(
        { status: 'pending', nextAttemptAt: { $lte: clock.now() } },
        { sort: { nextAttemptAt: 1 } },
      );
      if (due.length === 0) break;
      for (const delivery of due) {
        const failed = delivery.attempts < 3 && chance(delivery.attempts === 0 ? 10 : 30);
        tick(50 + random(200));
        await commands.handle(
          webhookDeliveryAggregate,
          delivery.id,
          {
            type: 'RecordDeliveryAttempt',
            attempt: delivery.attempts + 1,
            firstDueAt: delivery.firstDueAt,
            statusCode: failed ? (chance(50) ? 503 : null) : 200,
            error: failed ? 'connect ECONNREFUSED' : null,
            durationMs: 20 + random(400),
          },
          {
            organizationId: delivery.organizationId,
            environment: delivery.environment as Environment,
            actor: 'system:webhook-dispatcher',
            causationId: delivery.eventId,
          },
        );
        summary.deliveryAttempts++;
      }
      tick(10 * 60_000);
    }
    options.onProgress?.(await caughtUp());
  }

  summary.events = await caughtUp();
  await projections.stop();
  if (!options.readStore) await readStore.close();
  for (let after: bigint | null = null; ; ) {
    const batch = await eventStore.readAll(after, 5000);
    if (batch.length === 0) break;
    for (const event of batch) summary.eventTypes[event.type] = (summary.eventTypes[event.type] ?? 0) + 1;
    after = batch[batch.length - 1]!.position;
  }
  return summary;
}
