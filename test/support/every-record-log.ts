/**
 * Writes a log that goes through the records the realistic log (bench/support/realistic-log.ts)
 * leaves out, by driving their real deciders through the command handler on a manual clock:
 * organization settings, withdrawal addresses and card processor keys, API keys, webhook
 * endpoints (created, changed and deleted while the tenant's events go on) and their deliveries
 * (exhausted, canceled, resent), the operator's audit checkpoints, customers (one moving while
 * mails to it wait), tax rates, the catalog, coupons and promotion codes (redeemed, released,
 * limits, expiries), payment links with the sessions paid through them, invoices (every way one
 * ends, a recurring one, reminders, payment attempts) with their mails, subscriptions (renewals,
 * missed payments, pauses, cancels, a trial, an expired first payment, one still going), the team
 * (users, two-factor, invites, email claims, dashboard sessions, the team policy), and sessions
 * swept, dropped, refunded, discounted, receipted and credited by reconciliation. Several
 * merchants' stories run interleaved, a step each in turn, so one batch of the projections holds
 * events of many records.
 */
import { generateKeyPairSync } from 'node:crypto';
import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import { paymentFixture, sessionFixture } from '../../machines/checkout-session.fixture.ts';
import { RECONCILIATION_TRANSACTION_PREFIX, type CheckoutSession } from '../../machines/checkout-session.types.ts';
import { couponAggregate } from '../../machines/coupon.aggregate.ts';
import { invoiceAggregate } from '../../machines/invoice.aggregate.ts';
import { invoiceFixture } from '../../machines/invoice.fixture.ts';
import type { Invoice } from '../../machines/invoice.types.ts';
import { paymentLinkAggregate } from '../../machines/payment-link.aggregate.ts';
import type { NewPaymentLink } from '../../machines/payment-link.decide.ts';
import { subscriptionAggregate } from '../../machines/subscription.aggregate.ts';
import { newSubscription } from '../../machines/subscription.decide.ts';
import { webhookDeliveryAggregate } from '../../machines/webhook-delivery.aggregate.ts';
import { apiKeyAggregate } from '../../src/actors/api-key.ts';
import { cardProcessorAggregate } from '../../src/actors/card-processor.ts';
import { priceAggregate, productAggregate } from '../../src/actors/catalog.ts';
import { createCommandHandler, type CommandContext } from '../../src/actors/command-handler.ts';
import { customerAggregate } from '../../src/actors/customer.ts';
import { dashboardSessionAggregate } from '../../src/actors/dashboard-session.ts';
import { mailAggregate } from '../../src/actors/mail.ts';
import { organizationAggregate, organizationRecordId } from '../../src/actors/organization.ts';
import { taxRateAggregate } from '../../src/actors/tax-rate.ts';
import { teamPolicyAggregate } from '../../src/actors/team-policy.ts';
import { userInviteAggregate } from '../../src/actors/user-invite.ts';
import { userAggregate, userEmailClaimAggregate, userEmailClaimId } from '../../src/actors/user.ts';
import { webhookEndpointAggregate } from '../../src/actors/webhook-endpoint.ts';
import { writeCheckpoint } from '../../src/audit/checkpoints.ts';
import { loadOperatorKey } from '../../src/audit/operator-key.ts';
import type { EventStore } from '../../src/event-store/event-store.ts';
import { ALL_PROJECTIONS } from '../../src/projections/all-projections.ts';
import { COLLECTIONS, type WebhookDeliveryDoc } from '../../src/projections/collections.ts';
import { mailIdOf } from '../../src/projections/mails.projection.ts';
import { createProjectionRunner } from '../../src/projections/projection-runner.ts';
import { renewalInvoiceIdOf } from '../../src/projections/subscriptions.projection.ts';
import { createEmbeddedReadStore } from '../../src/read-store/embedded-read-store.ts';
import type { ManualClock } from '../../src/shared/clock.ts';
import { newId } from '../../src/shared/ids.ts';
import { createOrganization } from '../../src/tenancy/create-organization.ts';
import { AUDIT_CHECKPOINT_EVENT_TYPE } from '../../src/webhooks/webhook-event-types.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** A story's step: done, or (a number) not before that time on the clock. */
type Story = AsyncGenerator<number | undefined, void, void>;

/**
 * Runs the stories a step each in turn, a second apart; when every story waits for a time, the
 * clock jumps to the first.
 */
async function interleave(clock: ManualClock, stories: Story[]): Promise<void> {
  let running = stories.map((story) => ({ story, until: clock.now() }));
  while (running.length > 0) {
    const due = running.filter((r) => r.until <= clock.now());
    if (due.length === 0) {
      clock.set(Math.min(...running.map((r) => r.until)));
      continue;
    }
    for (const entry of due) {
      clock.advanceBy(1000);
      const step = await entry.story.next();
      if (step.done) running = running.filter((r) => r !== entry);
      else entry.until = step.value ?? clock.now();
    }
  }
}

/** Appends the stories of `merchants` (3) new organizations to the log, then stops its projections. */
export async function writeEveryRecordLog(options: {
  eventStore: EventStore;
  clock: ManualClock;
  merchants?: number;
}): Promise<void> {
  const { eventStore, clock } = options;
  const commands = createCommandHandler({ eventStore, clock });
  // The read models, followed live: the webhook deliveries to record attempts for are found there.
  const readStore = createEmbeddedReadStore({});
  const projections = createProjectionRunner({ eventStore, readStore, projections: ALL_PROJECTIONS, clock });
  await projections.start();
  const caughtUp = async () => {
    const head = await eventStore.headPosition();
    if (head !== null) await projections.waitFor(head, 60_000);
  };
  const at = () => new Date(clock.now()).toISOString();
  const later = (ms: number) => clock.now() + ms;
  const operatorKey = loadOperatorKey({
    given: generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    keyFile: '',
  });

  const stories: Story[] = [];
  for (let m = 0; m < (options.merchants ?? 3); m++) {
    const created = await createOrganization(commands, `Every Record Shop ${m + 1}`);
    const { organizationId } = created;
    const tenant = { organizationId, environment: 'test' as const };
    const ctx: CommandContext = { ...tenant, actor: `api_key:${created.keys.test.id}` };
    const system = (part: string): CommandContext => ({ ...tenant, actor: `system:${part}` });
    const orgId = organizationRecordId(organizationId, 'test');
    const endpointId = newId();
    await commands.handle(
      webhookEndpointAggregate,
      endpointId,
      {
        type: 'CreateWebhookEndpoint',
        endpoint: {
          id: endpointId,
          ...tenant,
          description: 'everything',
          url: `https://shop${m}.example/hooks`,
          sealedSecret: 'sealed',
          isDisabled: false,
          enabledEvents: { events: ['*'] },
        },
      },
      ctx,
    );
    const customerId = newId();
    await commands.handle(
      customerAggregate,
      customerId,
      {
        type: 'CreateCustomer',
        customer: {
          id: customerId,
          ...tenant,
          email: `payer${m}@example.com`,
          name: 'Ada',
          phone: null,
          organizationName: null,
          customerReferenceId: null,
          address: null,
          metadata: {},
          visibility: 20,
        },
      },
      ctx,
    );

    /** A new open session of this tenant (3 USDC, an hour to pay), with its own deposit address. */
    const openSession = async (overrides: Partial<CheckoutSession> = {}): Promise<CheckoutSession> => {
      const id = newId();
      const base = sessionFixture();
      const session = sessionFixture({
        id,
        ...tenant,
        createdAt: at(),
        updatedAt: at(),
        expiresAt: new Date(later(HOUR)).toISOString(),
        url: `http://127.0.0.1/checkout/${id}`,
        addresses: base.addresses.map((a) => ({
          ...a,
          checkoutSessionId: id,
          paymentAddress: `0x${id.replace(/-/g, '').padStart(40, '0').slice(-40)}`,
        })),
        paymentIntent: { ...base.paymentIntent, id: newId(), organizationId, createdAt: at(), updatedAt: at() },
        ...overrides,
      });
      await commands.handle(checkoutSessionAggregate, id, { type: 'CreateCheckoutSession', session }, ctx);
      return session;
    };
    /** The payer pays `amount` (10^8-scaled) and the block becomes final: answers the transfer id. */
    const pay = async (session: CheckoutSession, amount = session.amountTotal): Promise<string> => {
      const transferId = newId();
      const payment = { ...paymentFixture(transferId, amount), toAddress: session.addresses[0]!.paymentAddress };
      await commands.handle(
        checkoutSessionAggregate,
        session.id,
        { type: 'SelectPaymentMethod', addressId: session.addresses[0]!.id },
        system('hosted-checkout'),
      );
      await commands.handle(
        checkoutSessionAggregate,
        session.id,
        { type: 'RecordTransfer', payment },
        system('matcher'),
      );
      await commands.handle(
        checkoutSessionAggregate,
        session.id,
        { type: 'ConfirmTransfer', transferId },
        system('matcher'),
      );
      return transferId;
    };
    const sessionCommand = (id: string, command: Parameters<typeof checkoutSessionAggregate.decide>[1]) =>
      commands.handle(checkoutSessionAggregate, id, command, system('sweeper'));

    stories.push(
      (async function* organization(): Story {
        await commands.handle(
          organizationAggregate,
          orgId,
          { type: 'UpdateBusinessDetails', changes: { email: `billing@shop${m}.example` } },
          ctx,
        );
        yield;
        const [first, second] = [newId(), newId()];
        const address = (n: number) => `0x${String(n).padStart(40, '0')}`;
        await commands.handle(
          organizationAggregate,
          orgId,
          { type: 'AddWithdrawalAddress', id: first, name: 'treasury', address: address(1), chainId: 7357 },
          ctx,
        );
        yield;
        await commands.handle(
          organizationAggregate,
          orgId,
          { type: 'AddWithdrawalAddress', id: second, name: 'cold', address: address(2), chainId: 7357 },
          ctx,
        );
        yield;
        await commands.handle(
          organizationAggregate,
          orgId,
          { type: 'UpdateWithdrawalAddress', id: second, name: 'cold storage', address: address(3) },
          ctx,
        );
        yield;
        await commands.handle(organizationAggregate, orgId, { type: 'MarkWithdrawalAddressDefault', id: second }, ctx);
        yield;
        await commands.handle(
          organizationAggregate,
          orgId,
          { type: 'UpdatePaymentSetting', changes: { applyFee: true, feePercentage: 1 } },
          ctx,
        );
        yield;
        await commands.handle(
          organizationAggregate,
          orgId,
          { type: 'UpdateInvoiceSetting', changes: { footer: 'Thank you' } },
          ctx,
        );
        yield;
        await commands.handle(
          organizationAggregate,
          orgId,
          { type: 'UpdateBranding', brandColor: '#102030', brandLogo: null },
          ctx,
        );
        yield;
        await commands.handle(
          cardProcessorAggregate,
          orgId,
          {
            type: 'SetCardProcessorKeys',
            provider: 'stripe',
            publishableKey: 'pk_test_1',
            sealedSecretKey: 'sealed',
            secretKeyLast4: '4242',
          },
          ctx,
        );
        yield;
        await commands.handle(cardProcessorAggregate, orgId, { type: 'RemoveCardProcessorKeys' }, ctx);
        yield later(3 * DAY);
        await commands.handle(organizationAggregate, orgId, { type: 'RemoveWithdrawalAddress', id: second }, ctx);
        yield;
        const third = newId();
        await commands.handle(
          organizationAggregate,
          orgId,
          { type: 'AddWithdrawalAddress', id: third, name: 'new treasury', address: address(4), chainId: 7357 },
          ctx,
        );
      })(),

      (async function* apiKeys(): Story {
        await commands.handle(
          apiKeyAggregate,
          created.keys.test.id,
          { type: 'RegenerateApiKey', secretHash: `hash-${newId()}`, last4: 'abcd' },
          ctx,
        );
        yield;
        const id = newId();
        await commands.handle(
          apiKeyAggregate,
          id,
          {
            type: 'IssueApiKey',
            id,
            ...tenant,
            name: 'reporting',
            scope: 'read',
            secretHash: `hash-${id}`,
            last4: 'wxyz',
          },
          ctx,
        );
        yield later(2 * DAY);
        await commands.handle(apiKeyAggregate, id, { type: 'DeleteApiKey' }, ctx);
      })(),

      (async function* endpoints(): Story {
        // Created while the tenant's other records change: its first events are the ones after it.
        yield;
        yield;
        const id = newId();
        await commands.handle(
          webhookEndpointAggregate,
          id,
          {
            type: 'CreateWebhookEndpoint',
            endpoint: {
              id,
              ...tenant,
              description: 'accounting',
              url: `https://shop${m}.example/accounting`,
              sealedSecret: 'sealed-2',
              isDisabled: false,
              enabledEvents: { events: ['invoice.paid', 'checkout_session.completed'] },
            },
          },
          ctx,
        );
        yield;
        // Its description changes, a tenant's event follows, then it takes every event: a retried
        // batch must not send it the one before.
        for (let round = 0; round < 3; round++) {
          await commands.handle(
            webhookEndpointAggregate,
            id,
            { type: 'UpdateWebhookEndpoint', changes: { description: `accounting ${round}` } },
            ctx,
          );
          await commands.handle(
            organizationAggregate,
            orgId,
            {
              type: 'AddWithdrawalAddress',
              id: newId(),
              name: `payouts ${round}`,
              address: `0x${String(100 + round).padStart(40, '0')}`,
              chainId: 7357,
            },
            ctx,
          );
          await commands.handle(
            webhookEndpointAggregate,
            id,
            { type: 'UpdateWebhookEndpoint', changes: { enabledEvents: { events: ['*'] } } },
            ctx,
          );
          yield;
          await commands.handle(
            webhookEndpointAggregate,
            id,
            { type: 'UpdateWebhookEndpoint', changes: { enabledEvents: { events: ['invoice.paid'] } } },
            ctx,
          );
          yield;
        }
        await commands.handle(
          webhookEndpointAggregate,
          id,
          { type: 'RegenerateWebhookSecret', sealedSecret: 's3' },
          ctx,
        );
        yield;
        await commands.handle(webhookEndpointAggregate, id, { type: 'SendTestWebhook', testId: newId() }, ctx);
        yield;
        await commands.handle(
          webhookEndpointAggregate,
          id,
          { type: 'UpdateWebhookEndpoint', changes: { isDisabled: true } },
          ctx,
        );
        yield;
        yield;
        await commands.handle(
          webhookEndpointAggregate,
          id,
          { type: 'UpdateWebhookEndpoint', changes: { isDisabled: false } },
          ctx,
        );
        yield;
        // The operator's signed checkpoints of the whole log go to the endpoints that name them.
        const auditor = newId();
        await commands.handle(
          webhookEndpointAggregate,
          auditor,
          {
            type: 'CreateWebhookEndpoint',
            endpoint: {
              id: auditor,
              ...tenant,
              description: 'audit',
              url: `https://shop${m}.example/audit`,
              sealedSecret: 'sealed-3',
              isDisabled: false,
              enabledEvents: { events: [AUDIT_CHECKPOINT_EVENT_TYPE] },
            },
          },
          ctx,
        );
        yield;
        await writeCheckpoint({ eventStore, key: operatorKey, clock });
        yield later(4 * DAY);
        await commands.handle(webhookEndpointAggregate, id, { type: 'DeleteWebhookEndpoint' }, ctx);
        yield;
        await writeCheckpoint({ eventStore, key: operatorKey, clock });
      })(),

      (async function* deliveries(): Story {
        // Once the first records have scheduled some: one exhausts its attempts and is resent, one
        // is canceled and resent, one succeeds and is resent to fail.
        yield later(HOUR);
        await caughtUp();
        const pending = await readStore
          .collection<WebhookDeliveryDoc>(COLLECTIONS.webhookDeliveries)
          .find({ organizationId, endpointId, status: 'pending', attempts: 0 }, { sort: { _id: 1 }, limit: 3 });
        const [exhausted, canceled, resent] = pending;
        const attempt = (d: WebhookDeliveryDoc, n: number, ok: boolean) =>
          commands.handle(
            webhookDeliveryAggregate,
            d.id,
            {
              type: 'RecordDeliveryAttempt',
              attempt: n,
              firstDueAt: d.firstDueAt,
              statusCode: ok ? 200 : 503,
              error: ok ? null : 'unavailable',
              durationMs: 40,
            },
            system('webhook-dispatcher'),
          );
        const resend = (d: WebhookDeliveryDoc) =>
          commands.handle(webhookDeliveryAggregate, d.id, { type: 'ResendDelivery', by: ctx.actor }, ctx);
        if (exhausted) {
          for (let n = 1; n <= 10; n++) {
            await attempt(exhausted, n, false);
            yield;
          }
          await resend(exhausted);
          yield;
          await attempt(exhausted, 11, true);
          yield;
        }
        if (canceled) {
          await commands.handle(
            webhookDeliveryAggregate,
            canceled.id,
            { type: 'CancelDelivery', reason: 'endpoint_disabled' },
            system('webhook-dispatcher'),
          );
          yield;
          await resend(canceled);
          yield;
          await attempt(canceled, 1, true);
          yield;
        }
        if (resent) {
          await attempt(resent, 1, true);
          yield;
          await resend(resent);
          yield;
          await attempt(resent, 2, false);
        }
      })(),

      (async function* customers(): Story {
        const other = newId();
        await commands.handle(
          customerAggregate,
          other,
          {
            type: 'CreateCustomer',
            customer: {
              id: other,
              ...tenant,
              email: `other${m}@example.com`,
              name: null,
              phone: null,
              organizationName: 'Other Ltd',
              customerReferenceId: 'ref-1',
              address: null,
              metadata: { tier: 'gold' },
              visibility: 10,
            },
          },
          ctx,
        );
        yield;
        await commands.handle(customerAggregate, other, { type: 'UpdateCustomer', changes: { name: 'Grace' } }, ctx);
        yield;
        await commands.handle(
          customerAggregate,
          other,
          {
            type: 'UpdateCustomerFromCheckout',
            checkoutSessionId: newId(),
            completedAt: at(),
            changes: { name: 'Grace Hopper' },
          },
          system('customer-checkout-updates'),
        );
        yield later(DAY);
        await commands.handle(customerAggregate, other, { type: 'DeleteCustomer' }, ctx);
      })(),

      (async function* taxRates(): Story {
        const id = newId();
        await commands.handle(
          taxRateAggregate,
          id,
          {
            type: 'CreateTaxRate',
            taxRate: {
              id,
              ...tenant,
              name: 'VAT',
              description: null,
              country: 'DE',
              percentage: '19',
              type: 'exclusive',
              isActive: true,
              metadata: {},
            },
          },
          ctx,
        );
        yield;
        await commands.handle(
          taxRateAggregate,
          id,
          { type: 'UpdateTaxRate', changes: { description: 'standard' } },
          ctx,
        );
        yield;
        await commands.handle(taxRateAggregate, id, { type: 'UpdateTaxRate', changes: { isActive: false } }, ctx);
      })(),

      (async function* catalog(): Story {
        const product = newId();
        await commands.handle(
          productAggregate,
          product,
          {
            type: 'CreateProduct',
            product: {
              id: product,
              ...tenant,
              name: 'Hoodie',
              description: null,
              isActive: true,
              unitLabel: null,
              url: null,
              images: [],
              metadata: {},
              visibility: 20,
              defaultPriceId: null,
            },
          },
          ctx,
        );
        yield;
        const prices = [newId(), newId()];
        for (const [i, price] of prices.entries()) {
          await commands.handle(
            priceAggregate,
            price,
            {
              type: 'CreatePrice',
              price: {
                id: price,
                ...tenant,
                productId: product,
                type: 'one_time',
                currency: 'usdc',
                unitAmount: String((i + 1) * 100_000_000),
                interval: null,
                intervalCount: null,
                isActive: true,
                nickname: null,
                metadata: {},
                billingScheme: 'per_unit',
              },
            },
            ctx,
          );
          yield;
        }
        await commands.handle(
          productAggregate,
          product,
          { type: 'UpdateProduct', changes: { name: 'Hoodie (black)', defaultPriceId: prices[1]! } },
          ctx,
        );
        yield;
        await commands.handle(priceAggregate, prices[0]!, { type: 'UpdatePrice', changes: { isActive: false } }, ctx);
        yield;
        await commands.handle(productAggregate, product, { type: 'DeleteProduct' }, ctx);
      })(),

      (async function* coupons(): Story {
        const id = newId();
        const [short, long, soon] = [newId(), newId(), newId()];
        const redeemBy = later(3 * HOUR);
        await commands.handle(
          couponAggregate,
          id,
          {
            type: 'CreateCoupon',
            coupon: {
              id,
              ...tenant,
              name: 'Launch',
              percentOff: 10,
              amountOff: null,
              currency: null,
              maxRedemptions: 2,
              redeemBy: new Date(redeemBy).toISOString(),
              metadata: {},
              isEnable: true,
              promotionCodes: [
                {
                  id: short,
                  code: `SHORT${m}`,
                  maxRedemptions: 1,
                  expiredAt: new Date(later(HOUR)).toISOString(),
                  metadata: {},
                },
                { id: long, code: `LONG${m}`, maxRedemptions: null, expiredAt: null, metadata: {} },
                {
                  id: soon,
                  code: `SOON${m}`,
                  maxRedemptions: null,
                  expiredAt: new Date(later(HOUR)).toISOString(),
                  metadata: {},
                },
              ],
            },
          },
          ctx,
        );
        yield;
        // A session takes the long code and is paid with the discount.
        const session = await openSession({ allowPromotionCodes: true });
        yield;
        const redemption = newId();
        await commands.handle(
          couponAggregate,
          id,
          { type: 'RedeemPromotionCode', redemptionId: redemption, promotionCode: `LONG${m}` },
          system('checkout'),
        );
        await sessionCommand(session.id, {
          type: 'ApplyDiscount',
          discount: { couponId: id, promotionCodeId: long, code: `LONG${m}`, amountDiscount: '30000000' },
        });
        yield;
        await commands.handle(
          couponAggregate,
          id,
          { type: 'RedeemPromotionCode', redemptionId: newId(), promotionCode: `SHORT${m}` },
          system('checkout'),
        );
        yield;
        await pay(session, '270000000');
        yield;
        const released = newId();
        await commands.handle(
          couponAggregate,
          id,
          { type: 'UpdateCoupon', changes: { maxRedemptions: 3, name: 'Launch week' } },
          ctx,
        );
        yield;
        await commands.handle(
          couponAggregate,
          id,
          { type: 'RedeemPromotionCode', redemptionId: released, promotionCode: `LONG${m}` },
          system('checkout'),
        );
        yield;
        await commands.handle(
          couponAggregate,
          id,
          { type: 'ReleasePromotionCodeRedemption', redemptionId: released, reason: 'session expired' },
          system('checkout'),
        );
        yield;
        await commands.handle(couponAggregate, id, { type: 'DisableCoupon' }, ctx);
        yield;
        await commands.handle(couponAggregate, id, { type: 'EnableCoupon' }, ctx);
        yield later(HOUR);
        await commands.handle(
          couponAggregate,
          id,
          { type: 'ExpirePromotionCode', promotionCodeId: soon },
          system('timer'),
        );
        yield redeemBy;
        await commands.handle(couponAggregate, id, { type: 'ExpireCoupon' }, system('timer'));
        yield;
        await commands.handle(couponAggregate, id, { type: 'ArchiveCoupon' }, ctx);
      })(),

      (async function* paymentLinks(): Story {
        const link = (id: string, type: NewPaymentLink['type']): NewPaymentLink => ({
          id,
          ...tenant,
          type,
          pricing: 'fixed',
          priceType: 'one_time',
          title: 'Concert ticket',
          description: null,
          image: null,
          tags: [],
          currency: 'usdc',
          amount: '300000000',
          priceId: newId(),
          productId: newId(),
          interval: null,
          intervalCount: null,
          suggestedAmounts: [],
          minimumAmount: null,
          maximumAmount: null,
          nameCollection: false,
          emailCollection: true,
          phoneNumberCollection: false,
          billingAddressCollection: false,
          shippingAddressCollection: false,
          customFields: { fields: [] },
          submitType: 'pay',
          afterCompletion: 'hosted_confirmation',
          afterCompletionRedirectUrl: null,
          afterCompletionConfirmMsg: 'Thanks!',
          allowPromotionCodes: false,
          allowedChains: [],
          metadata: {},
          isActive: true,
        });
        const [once, many] = [newId(), newId()];
        await commands.handle(
          paymentLinkAggregate,
          once,
          { type: 'CreatePaymentLink', link: link(once, 'one_time') },
          ctx,
        );
        yield;
        await commands.handle(
          paymentLinkAggregate,
          many,
          { type: 'CreatePaymentLink', link: link(many, 'multiple') },
          ctx,
        );
        yield;
        const first = await openSession({ paymentLinkId: once });
        const second = await openSession({ paymentLinkId: many });
        yield;
        await pay(first);
        yield;
        await pay(second);
        yield;
        await commands.handle(
          paymentLinkAggregate,
          many,
          { type: 'UpdatePaymentLink', changes: { title: 'Concert ticket (late entry)' } },
          ctx,
        );
        yield;
        const third = await openSession({ paymentLinkId: many });
        yield;
        await pay(third);
        yield;
        await commands.handle(paymentLinkAggregate, many, { type: 'DeactivatePaymentLink' }, ctx);
        yield;
        await commands.handle(paymentLinkAggregate, many, { type: 'ActivatePaymentLink' }, ctx);
        yield;
        await commands.handle(paymentLinkAggregate, once, { type: 'DeletePaymentLink' }, ctx);
      })(),

      (async function* sweeps(): Story {
        const session = await openSession();
        yield;
        const transferId = await pay(session);
        yield;
        const network = session.addresses[0]!.network;
        const broadcast = (transactionHash: string) =>
          sessionCommand(session.id, {
            type: 'RecordSweepBroadcast',
            broadcast: {
              network,
              chainId: 7357,
              transactionHash,
              transferIds: [transferId],
              share: { index: 0, count: 1 },
              signedTransaction: '0xsigned',
            },
          });
        const [dropped, mined] = [`0x${'d'.repeat(63)}${m}`, `0x${'e'.repeat(63)}${m}`];
        await broadcast(dropped);
        yield;
        // Dropped for its age: looked up still, until the look-up ends below.
        await sessionCommand(session.id, {
          type: 'DropSweepBroadcast',
          network,
          transactionHash: dropped,
          mayBeMined: true,
        });
        yield;
        await broadcast(mined);
        yield;
        await sessionCommand(session.id, {
          type: 'RecordSweep',
          sweep: {
            network,
            chainId: 7357,
            transactionHash: mined,
            transferIds: [transferId],
            gasUsed: '21000',
            gasCost: '1',
          },
        });
        yield;
        await sessionCommand(session.id, { type: 'EndSweepLookUp', network, transactionHash: dropped });
        yield;
        await commands.handle(
          checkoutSessionAggregate,
          session.id,
          { type: 'RequestPaymentReceipt', to: `payer${m}@example.com`, receiptNumber: `R-${m}` },
          ctx,
        );
        yield;
        await commands.handle(
          checkoutSessionAggregate,
          session.id,
          { type: 'MarkPaymentRefunded', comment: 'returned' },
          ctx,
        );
        yield;
        // A session credited from its deposit's balance (a follower was down), then the transfer's log is read.
        const credited = await openSession();
        const transfer = {
          ...paymentFixture(newId(), credited.amountTotal),
          toAddress: credited.addresses[0]!.paymentAddress,
        };
        await commands.handle(
          checkoutSessionAggregate,
          credited.id,
          {
            type: 'RecordTransfer',
            payment: {
              ...transfer,
              transferId: newId(),
              transactionHash: `${RECONCILIATION_TRANSACTION_PREFIX}${newId()}`,
              blockNumber: transfer.blockNumber + 5,
            },
          },
          system('reconciler'),
        );
        yield;
        await commands.handle(
          checkoutSessionAggregate,
          credited.id,
          { type: 'RecordTransfer', payment: transfer },
          system('matcher'),
        );
      })(),

      (async function* invoices(): Story {
        const dueDate = new Date(later(10 * DAY)).toISOString();
        const draft = (id: string, overrides: Partial<Invoice> = {}): Invoice =>
          invoiceFixture({
            id,
            ...tenant,
            customerId,
            createdAt: at(),
            updatedAt: at(),
            dueDate,
            number: `INV-${id.slice(0, 8)}`,
            reminders: { enabled: true, daysBeforeDue: [3], daysAfterDue: [1, 2] },
            ...overrides,
          });
        const handle = (id: string, command: Parameters<typeof invoiceAggregate.decide>[1], c = ctx) =>
          commands.handle(invoiceAggregate, id, command, c);
        // The customer moves while mails to it wait: each keeps the address it had when it was due.
        const changeAddress = (to: string) =>
          commands.handle(
            customerAggregate,
            customerId,
            { type: 'UpdateCustomer', changes: { email: `payer${m}@${to}.example.com` } },
            ctx,
          );
        const url = (id: string) => `http://127.0.0.1/invoice/${id}`;
        const [paid, marked, voided, uncollectible, deleted, overdue, monthly] = [
          newId(),
          newId(),
          newId(),
          newId(),
          newId(),
          newId(),
          newId(),
        ];
        for (const id of [paid, marked, voided, uncollectible, deleted, overdue]) {
          await handle(id, { type: 'CreateInvoice', invoice: draft(id) });
          yield;
        }
        // A recurring one: its finalize schedules the next of the series.
        const recurring = { interval: 'month', intervalCount: 1 } as const;
        await handle(monthly, {
          type: 'CreateInvoice',
          invoice: draft(monthly, { invoiceType: 'recurring', recurring, collectionMethod: 'charge_automatically' }),
        });
        yield;
        await handle(voided, { type: 'UpdateInvoice', changes: { memo: 'Net 10' } });
        await handle(deleted, { type: 'DeleteInvoice' });
        yield;
        // The system sends it: its mail waits for the dispatcher, fails once, then goes.
        const sent = await handle(
          paid,
          { type: 'SendInvoice', to: null, url: url(paid), mailed: false },
          system('invoicing'),
        );
        const mail = mailIdOf(sent.events.find((e) => e.type === 'InvoiceSent')!.id);
        yield;
        await changeAddress('sent');
        yield;
        await commands.handle(
          mailAggregate,
          mail,
          { type: 'RecordMailDeliveryFailed', to: `payer${m}@example.com`, error: 'timeout' },
          system('mailer'),
        );
        yield;
        await commands.handle(
          mailAggregate,
          mail,
          { type: 'RecordMailSent', to: `payer${m}@example.com`, messageId: `<${mail}@mail>` },
          system('mailer'),
        );
        yield;
        // One is refused at a finalize first (as a renewal whose wallet was removed is), then finalized.
        await handle(
          overdue,
          {
            type: 'RecordInvoiceFinalizationFailure',
            code: 'payment_method_not_available',
            field: null,
            message: 'cannot be finalized: this organization has no payment method (wallet address)',
          },
          system('subscription-billing'),
        );
        yield;
        for (const id of [marked, voided, uncollectible, overdue, monthly]) {
          await handle(id, { type: 'FinalizeInvoice', url: url(id) });
          yield;
        }
        // Its mail is still pending (and failing) when the invoice is marked paid.
        const markedSent = await handle(
          marked,
          { type: 'SendInvoice', to: null, url: url(marked), mailed: false },
          system('invoicing'),
        );
        const markedMail = mailIdOf(markedSent.events.find((e) => e.type === 'InvoiceSent')!.id);
        yield;
        await commands.handle(
          mailAggregate,
          markedMail,
          { type: 'RecordMailDeliveryFailed', to: `payer${m}@example.com`, error: 'refused' },
          system('mailer'),
        );
        yield;
        await handle(marked, { type: 'MarkInvoicePaid' });
        yield;
        await handle(voided, { type: 'VoidInvoice' });
        yield;
        await handle(uncollectible, { type: 'MarkInvoiceUncollectible' });
        yield Date.parse(dueDate) - 3 * DAY;
        await handle(paid, { type: 'SendInvoiceReminder', kind: 'before_due', days: 3, dueDate }, system('timer'));
        await handle(overdue, { type: 'SendInvoiceReminder', kind: 'before_due', days: 3, dueDate }, system('timer'));
        yield;
        await changeAddress('reminded');
        yield;
        const [failing, paying] = [newId(), newId()];
        await handle(paid, { type: 'StartInvoicePaymentAttempt', checkoutSessionId: failing }, system('checkout'));
        yield;
        await handle(
          paid,
          { type: 'RecordInvoicePaymentFailure', checkoutSessionId: failing, reason: 'expired' },
          system('invoice-payments'),
        );
        yield;
        // Part of it first: the session waits for the rest.
        await handle(
          paid,
          { type: 'RecordInvoicePartialPayment', checkoutSessionId: paying, amountReceived: '100000000' },
          system('invoice-payments'),
        );
        yield;
        await handle(
          paid,
          {
            type: 'RecordInvoicePayment',
            checkoutSessionId: paying,
            transactionHash: '0xabc',
            amountReceived: '300000000',
          },
          system('invoice-payments'),
        );
        yield;
        // The payer paid twice: another session of the paid invoice received all of it too.
        await handle(
          paid,
          {
            type: 'RecordInvoicePayment',
            checkoutSessionId: newId(),
            transactionHash: '0xdef',
            amountReceived: '300000000',
          },
          system('invoice-payments'),
        );
        yield;
        await changeAddress('receipted');
        yield Date.parse(dueDate) + 2 * DAY + HOUR;
        // Both after-due reminders fell due together: the earlier one is skipped.
        await handle(overdue, { type: 'SendInvoiceReminder', kind: 'after_due', days: 1, dueDate }, system('timer'));
        await handle(overdue, { type: 'SendInvoiceReminder', kind: 'after_due', days: 2, dueDate }, system('timer'));
        yield;
        await handle(uncollectible, { type: 'MarkInvoicePaid' });
      })(),

      (async function* subscriptions(): Story {
        const item = {
          priceId: newId(),
          productId: newId(),
          quantity: 1,
          unitAmount: '1000000000',
          currency: 'usdc',
          interval: 'month' as const,
          intervalCount: 1,
        };
        const handle = (id: string, command: Parameters<typeof subscriptionAggregate.decide>[1], c = ctx) =>
          commands.handle(subscriptionAggregate, id, command, c);
        const state = async (id: string) =>
          (await commands.load(subscriptionAggregate, id, tenant)).state.context.subscription!;
        const create = (id: string, firstBill: string | null) =>
          handle(id, {
            type: 'CreateSubscription',
            subscription: newSubscription({
              id,
              ...tenant,
              customerId,
              items: [item],
              createdAt: at(),
              daysUntilDue: 3,
              ...(firstBill
                ? { firstBill: { id: firstBill, kind: 'checkout_session', dueAt: new Date(later(HOUR)).toISOString() } }
                : { trialEnd: new Date(later(7 * DAY)).toISOString() }),
            }),
          });
        const [paying, expiring, trial, lasting] = [newId(), newId(), newId(), newId()];
        const [firstBill, lastingBill] = [newId(), newId()];
        await create(paying, firstBill);
        await create(expiring, newId());
        await create(trial, null);
        await create(lasting, lastingBill);
        // Its payer applied a promotion code to its first checkout session: the first bill asks less.
        await handle(
          paying,
          {
            type: 'RecordFirstBillDiscount',
            invoiceId: firstBill,
            promotionCodeId: newId(),
            amountDiscount: '100000000',
          },
          system('billing'),
        );
        yield;
        await handle(paying, { type: 'RecordSubscriptionPayment', invoiceId: firstBill }, system('billing'));
        // Still going when the log ends: its renewal waits on a timer.
        await handle(lasting, { type: 'RecordSubscriptionPayment', invoiceId: lastingBill }, system('billing'));
        yield later(HOUR);
        await handle(expiring, { type: 'ExpireFirstPayment' }, system('timer'));
        yield;
        await handle(paying, { type: 'CancelSubscription', comment: 'too expensive' });
        yield;
        await handle(paying, { type: 'ResumeSubscription' });
        yield Date.parse((await state(trial)).currentPeriodEnd);
        // The trial ends: its first invoice is issued, and deleted by the merchant while a draft.
        const trialInvoice = renewalInvoiceIdOf(await state(trial));
        await handle(trial, { type: 'RenewSubscription', invoiceId: trialInvoice }, system('timer'));
        yield;
        await handle(trial, { type: 'RecordRenewalInvoiceDeleted', invoiceId: trialInvoice }, system('billing'));
        yield;
        await handle(trial, { type: 'CancelSubscription', comment: null });
        yield Date.parse((await state(paying)).currentPeriodEnd);
        const renewal = renewalInvoiceIdOf(await state(paying));
        await handle(paying, { type: 'RenewSubscription', invoiceId: renewal }, system('timer'));
        yield;
        // Weir could not finalize its invoice (a draft bill), then the merchant did: open again, paid.
        await handle(paying, { type: 'RecordRenewalInvoiceNotFinalized', invoiceId: renewal }, system('billing'));
        yield;
        const dueAt = (await state(paying)).latestInvoice!.dueAt;
        await handle(paying, { type: 'RecordRenewalInvoiceFinalized', invoiceId: renewal, dueAt }, system('billing'));
        yield;
        await handle(paying, { type: 'RecordSubscriptionPayment', invoiceId: renewal }, system('billing'));
        yield;
        await handle(paying, { type: 'PauseSubscription' });
        yield;
        await handle(paying, { type: 'ResumeSubscription' });
        yield Date.parse((await state(trial)).currentPeriodEnd);
        await handle(
          trial,
          { type: 'RenewSubscription', invoiceId: renewalInvoiceIdOf(await state(trial)) },
          system('timer'),
        );
        yield Date.parse((await state(paying)).currentPeriodEnd);
        const missed = renewalInvoiceIdOf(await state(paying));
        await handle(paying, { type: 'RenewSubscription', invoiceId: missed }, system('timer'));
        yield Date.parse((await state(paying)).latestInvoice!.dueAt);
        await handle(paying, { type: 'MarkRenewalPaymentMissed' }, system('timer'));
        yield later(7 * DAY + HOUR);
        await handle(paying, { type: 'MarkSubscriptionUnpaid' }, system('timer'));
        yield;
        await handle(paying, { type: 'RecordSubscriptionPayment', invoiceId: missed }, system('billing'));
        yield;
        await handle(paying, { type: 'EndSubscription', comment: 'closing the shop' });
        yield Date.parse((await state(lasting)).currentPeriodEnd);
        // Its renewal is voided by the merchant: that period is not billed, and it goes on.
        const voided = renewalInvoiceIdOf(await state(lasting));
        await handle(lasting, { type: 'RenewSubscription', invoiceId: voided }, system('timer'));
        yield;
        await handle(lasting, { type: 'RecordRenewalInvoiceVoided', invoiceId: voided }, system('billing'));
      })(),

      (async function* team(): Story {
        const [owner, member] = [newId(), newId()];
        const user = (id: string, command: Parameters<typeof userAggregate.decide>[1]) =>
          commands.handle(userAggregate, id, command, ctx);
        await user(owner, {
          type: 'CreateUser',
          id: owner,
          organizationId,
          email: `owner${m}@shop.example`,
          name: 'Owner',
          role: 'owner',
          passwordHash: 'hash-1',
        });
        yield;
        await commands.handle(
          teamPolicyAggregate,
          organizationId,
          { type: 'SetTwoFactorRequirement', required: true },
          ctx,
        );
        yield;
        await user(owner, {
          type: 'EnableTwoFactor',
          secretSealed: 'sealed',
          recoveryCodeHashes: ['r1', 'r2'],
          step: 100,
        });
        yield;
        await user(owner, { type: 'UseTwoFactorCode', step: 101 });
        yield;
        await user(owner, { type: 'UseRecoveryCode', hash: 'r1' });
        yield;
        await user(owner, { type: 'RenewRecoveryCodes', recoveryCodeHashes: ['r3', 'r4'] });
        yield;
        const session = newId();
        await commands.handle(
          dashboardSessionAggregate,
          session,
          {
            type: 'StartDashboardSession',
            session: {
              id: session,
              userId: owner,
              organizationId,
              tokenHash: 'token',
              clientAddress: '127.0.0.1',
              startedAt: at(),
              expiresAt: new Date(later(DAY)).toISOString(),
            },
          },
          ctx,
        );
        yield;
        await commands.handle(dashboardSessionAggregate, session, { type: 'RecordDashboardSessionActivity' }, ctx);
        yield;
        const [invite, revoked] = [newId(), newId()];
        const invited = (id: string, email: string) =>
          commands.handle(
            userInviteAggregate,
            id,
            {
              type: 'CreateUserInvite',
              invite: { id, organizationId, email, role: 'developer', tokenHash: 't1', invitedBy: `user:${owner}` },
            },
            ctx,
          );
        await invited(invite, `dev${m}@shop.example`);
        await invited(revoked, `nobody${m}@shop.example`);
        yield;
        await commands.handle(userInviteAggregate, invite, { type: 'ResendUserInvite', tokenHash: 't2' }, ctx);
        yield;
        await commands.handle(userInviteAggregate, revoked, { type: 'RevokeUserInvite' }, ctx);
        yield;
        await user(member, {
          type: 'CreateUser',
          id: member,
          organizationId,
          email: `dev${m}@shop.example`,
          name: null,
          role: 'developer',
          passwordHash: 'hash-2',
        });
        await commands.handle(
          userInviteAggregate,
          invite,
          { type: 'AcceptUserInvite', tokenHash: 't2', userId: member },
          ctx,
        );
        yield;
        await user(member, { type: 'ChangeUserRole', role: 'admin' });
        yield;
        await user(member, { type: 'ChangeUserPassword', passwordHash: 'hash-3' });
        yield;
        await user(owner, { type: 'DisableTwoFactor' });
        yield;
        await commands.handle(
          dashboardSessionAggregate,
          session,
          { type: 'EndDashboardSession', reason: 'signed_out' },
          ctx,
        );
        yield;
        await commands.handle(
          teamPolicyAggregate,
          organizationId,
          { type: 'SetTwoFactorRequirement', required: false },
          ctx,
        );
        yield;
        await user(member, { type: 'RemoveUser' });
        yield;
        const email = `dev${m}@shop.example`;
        await commands.handle(
          userEmailClaimAggregate,
          userEmailClaimId(email),
          { type: 'ClaimUserEmail', email, userId: member, organizationId },
          ctx,
        );
        yield;
        await commands.handle(
          userEmailClaimAggregate,
          userEmailClaimId(email),
          { type: 'ReleaseUserEmail', userId: member },
          ctx,
        );
      })(),
    );
  }
  try {
    await interleave(clock, stories);
  } finally {
    await projections.stop();
    await readStore.close();
  }
}
