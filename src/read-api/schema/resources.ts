import { TEST_WEBHOOK_EVENT_TYPE, WEBHOOK_EVENT_TYPES } from '../../webhooks/webhook-event-types.ts';
import { API_KEY_SCOPES } from '../../actors/api-key.ts';
import { amountString, timestamp, z } from './fields.ts';

/** Answer schemas of the converted resources (what the API sends; extra fields are allowed by the document). */

export const ApiKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    environment: z.enum(['test', 'live']),
    scope: z.enum(API_KEY_SCOPES).openapi({
      description: '`full`: everything; `read`: GET requests only; `audit`: reading plus `/api/v1/audit/*`',
    }),
    maskedKey: z.string().openapi({ example: 'sk_test_…a1b2' }),
    lastUsedAt: timestamp().nullable().openapi({
      description:
        'When the key last authenticated a request, to within a minute; null when it has not (since the read models were last rebuilt)',
    }),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  })
  .openapi('ApiKey');

export const IssuedApiKeySchema = ApiKeySchema.extend({
  secretKey: z.string().openapi({ description: 'The secret: shown only in this answer', example: 'sk_test_…' }),
}).openapi('IssuedApiKey');

const SUBSCRIPTION_STATUSES = [
  'incomplete',
  'incomplete_expired',
  'trialing',
  'active',
  'past_due',
  'unpaid',
  'canceled',
  'paused',
] as const;

const interval = z.enum(['day', 'week', 'month', 'year']);

/** The bill of the subscription's current period (Weir's own: the reference has none). */
const SubscriptionBillSchema = z
  .object({
    id: z.string().nullable().openapi({
      description:
        'The invoice that bills the period (`GET /invoices/{id}`), as `latestInvoiceId`; null when `kind` is `checkout_session`',
    }),
    checkoutSessionId: z.string().nullable().openapi({
      description:
        'The checkout session that bills the period when `kind` is `checkout_session` (the first payment of a subscription started at checkout); null for an invoice',
    }),
    kind: z.enum(['checkout_session', 'invoice']).openapi({
      description: 'What bills the period: a checkout session (`checkoutSessionId`) or an invoice (`id`)',
    }),
    amountDue: amountString().openapi({ description: 'What the bill asks, after a promotion code on the first bill' }),
    amountDiscount: amountString().optional().openapi({
      description:
        'What a promotion code took off the first bill (its checkout session); absent when none did. A code discounts the first payment only: renewals are billed in full',
    }),
    periodStart: timestamp(),
    periodEnd: timestamp(),
    issuedAt: timestamp(),
    dueAt: timestamp(),
    // An invoice settled after the subscription ended shows the invoice's own status (uncollectible too).
    status: z.enum(['open', 'draft', 'paid', 'missed', 'expired', 'deleted', 'void', 'uncollectible']).openapi({
      description:
        '`draft`: a renewal invoice Weir could not finalize (its `lastFinalizationError`): not sent, so not owed and never past due until the merchant finalizes it; it is then `open`, due at the due date it was finalized with. It does not stop the calendar: the next period’s renewal is issued at the period end and becomes the latest bill',
    }),
    paidAt: timestamp().nullable(),
    amountToRefund: amountString().optional().openapi({
      description:
        'Money the first checkout session (`checkoutSessionId`) of a subscription that ended without starting (`incomplete_expired`, or `canceled` while incomplete) received and keeps, owed back to the payer (Weir holds no funds: the merchant refunds it): the part it received by its due time, plus any money sent to it after it ended (its late payments; they never start the subscription). Absent otherwise',
    }),
  })
  .openapi('SubscriptionBill');

export const SubscriptionSchema = z
  .object({
    id: z.string(),
    object: z.literal('subscription'),
    organizationId: z.string(),
    livemode: z.boolean(),
    status: z.enum(SUBSCRIPTION_STATUSES),
    customerId: z.string().nullable(),
    clientReferenceId: z.string().nullable(),
    description: z.string().nullable(),
    metadata: z.record(z.string(), z.string()),
    collectionMethod: z.literal('send_invoice'),
    currency: z.string(),
    interval,
    intervalCount: z.number().int(),
    amountTotal: amountString(),
    daysUntilDue: z.number().int(),
    paymentMethodTypes: z.array(z.string()),
    lineItems: z.object({
      object: z.literal('list'),
      data: z.array(
        z.object({
          quantity: z.number().int(),
          price: z.object({
            id: z.string(),
            productId: z.string(),
            type: z.literal('recurring'),
            currency: z.string(),
            unitAmount: amountString(),
            interval,
            intervalCount: z.number().int(),
            product: z.object({ id: z.string(), name: z.string().nullable() }).openapi({
              description:
                'The product, named as when the subscription began (null name: a subscription recorded before names were kept)',
            }),
          }),
          amountSubtotal: amountString(),
          amountTotal: amountString(),
          currency: z.string(),
        }),
      ),
    }),
    startDate: timestamp(),
    billingCycleAnchor: timestamp(),
    currentPeriodStart: timestamp(),
    currentPeriodEnd: timestamp(),
    trialStart: timestamp().nullable(),
    trialEnd: timestamp().nullable(),
    cancelAtPeriodEnd: z.boolean(),
    cancelAt: timestamp().nullable(),
    canceledAt: timestamp().nullable(),
    // z.enum, not z.literal: zod-to-openapi leaves null out of a nullable literal's enum.
    cancellationReason: z.enum(['cancellation_requested']).nullable(),
    cancellationComment: z.string().nullable(),
    endedAt: timestamp().nullable(),
    pausedAt: timestamp().nullable(),
    pastDueSince: timestamp().nullable(),
    checkoutSessionId: z.string().nullable(),
    latestInvoiceId: z.string().nullable().openapi({
      description:
        "The latest bill's invoice; null while that bill is the checkout session that started the subscription",
    }),
    latestInvoice: SubscriptionBillSchema.nullable().openapi({
      description:
        'The latest bill: that of the current period, an invoice or the first checkout session (`kind`); null before the first bill. Earlier bills can still be open: a renewal is issued at each period end while an earlier one is open within its terms, so list the open invoices of the subscription (`GET /invoices?subscriptionId=…&status=open`) for all it owes',
    }),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  })
  .openapi('Subscription');

export const WebhookEventTypeSchema = z.enum(['*', ...WEBHOOK_EVENT_TYPES]).openapi('WebhookEventType', {
  description:
    '`*` is every event type but `audit.checkpoint`: a signed checkpoint of the whole log’s hash chain (no tenant’s; its position tells the log’s size), sent to the endpoints of every organization that name it. `payment_intent.failed` (the specification’s name) and `payment_intent.payment_failed` (the reference’s) are one event under two names, sent under the one listed (the reference’s when both are, or only `*`)',
});

export const WebhookEndpointSchema = z
  .object({
    id: z.string(),
    description: z.string(),
    url: z.string(),
    secret: z.string().openapi({
      description:
        'The key each delivery is signed with; a `read` or `audit` key sees it masked (`whsec_…` and its last four characters), since whoever holds it can sign a delivery',
    }),
    previousSecretExpiresAt: timestamp().nullable().openapi({
      description:
        'While the secret a regenerate replaced still signs (`previousSecretExpiresInSeconds`), when it stops: until then `X-Weir-Signature` carries a `v1` for it after the new one. null when none does',
    }),
    isDisabled: z.boolean(),
    enabledEvents: z.object({ events: z.array(z.string()) }),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  })
  .openapi('WebhookEndpoint');

/** The answer to a test send: the event is on its way, its delivery in the endpoint's log. */
export const WebhookTestSent = z
  .object({
    statusCode: z.literal(200),
    message: z.string(),
    deliveryId: z.string().openapi({
      description:
        'The test delivery’s `id` in `GET /api/v1/webhook-endpoints/{id}/deliveries`, the one to pass to `…/deliveries/{deliveryId}/resend`',
    }),
    eventId: z.string().openapi({
      description:
        'The test event’s id: the delivered body’s `id`, its `X-Webhook-Id` header and the delivery’s `eventId` (filter the log by it with `?eventId=`)',
    }),
  })
  .openapi('WebhookTestSent', {
    description: 'The test event is recorded and its delivery scheduled (sent at once by the dispatcher)',
    example: {
      statusCode: 200,
      message: 'test event sent to webhook endpoint 0f8fad5b-…',
      deliveryId: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
      eventId: '3b241101-e2bb-4255-8caf-4136c566a962',
    },
  });

export const WebhookDeliverySchema = z
  .object({
    id: z.string(),
    endpointId: z.string(),
    eventId: z.string(),
    eventType: z.string(),
    status: z.enum(['pending', 'succeeded', 'failed', 'canceled']),
    attempts: z.number().int(),
    nextAttemptAt: timestamp().nullable(),
    createdAt: timestamp(),
    attemptLog: z.array(z.looseObject({})).openapi({
      description:
        'Each attempt: `attempt`, `at`, `statusCode`, `error`, `durationMs` and `response` (the start of the answer body)',
    }),
    canceled: z
      .object({ at: timestamp(), reason: z.enum(['endpoint_deleted', 'endpoint_disabled']) })
      .nullable()
      .openapi({
        description:
          'When and why Weir stopped trying: the endpoint was deleted or disabled while the delivery was pending. Kept as history after a resend: `status` says where the delivery stands (`succeeded` once a resent attempt got a 2xx), so a delivered one may carry it',
      }),
    resends: z.array(z.object({ at: timestamp(), by: z.string(), attempt: z.number().int() })).openapi({
      description: 'Attempts asked for by hand: when, by whom (`user:<id>` or `api_key:<id>`) and which attempt',
    }),
  })
  .openapi('WebhookDelivery');

/** A deleted key: every DELETE's `{statusCode, message}`, with the `success` Weir answered first. */
export const ApiKeyDeleted = z
  .object({ statusCode: z.literal(200), message: z.string(), success: z.literal(true) })
  .openapi('ApiKeyDeleted', {
    example: { statusCode: 200, message: 'API key 0f8fad5b-… deleted', success: true },
  });

export const ALL_EVENT_TYPES = [...WEBHOOK_EVENT_TYPES, TEST_WEBHOOK_EVENT_TYPE] as const;
