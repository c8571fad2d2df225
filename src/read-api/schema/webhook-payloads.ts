import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import { WEBHOOK_API_VERSION } from '../../webhooks/webhook-events.ts';
import {
  AUDIT_CHECKPOINT_EVENT_TYPE,
  TEST_WEBHOOK_EVENT_TYPE,
  WEBHOOK_EVENT_TYPES,
  referenceNameOf,
  specNameOf,
} from '../../webhooks/webhook-event-types.ts';
import { TOKEN_HEADER_SETTING, WEBHOOK_HEADER_DOCS } from '../../webhooks/webhook-headers.ts';
import { z } from './fields.ts';
import { CheckoutSessionSchema, IntentTransactionSchema, PaymentIntentSchema } from './checkout-session.ts';
import { InvoiceEventObjectSchema } from './invoice.ts';
import { WithdrawalAddressSchema } from './organization.ts';
import { SubscriptionSchema } from './resources.ts';

const DeletedWithdrawalAddress = z.object({ id: z.string(), deleted: z.literal(true) });
const TestPayload = z.object({
  id: z.string(),
  url: z.string(),
  description: z.string(),
  message: z.string(),
});
const AuditCheckpoint = z
  .object({
    position: z.string().openapi({ description: 'The log position signed for (decimal)' }),
    hash: z.string().openapi({ description: 'The chain hash at that position (hex SHA-256)' }),
    signedAt: z.string().openapi({ description: 'When it was signed (ISO 8601)' }),
    publicKey: z.string().openapi({ description: 'The operator’s ed25519 public key (base64url of its 32 bytes)' }),
    signature: z.string().openapi({
      description:
        'ed25519 signature (base64url) of the text `weir audit checkpoint v1\\n<position>\\n<hash>\\n<signedAt>`',
    }),
  })
  .openapi('AuditCheckpoint', {
    description:
      'A signed checkpoint of the whole log’s hash chain: keep it off the machine, and check the log against it with `weir audit verify --checkpoint FILE`',
  });

/** The session with the transfer that came after it ended (null when the intent no longer shows it). */
const LatePaymentSession = CheckoutSessionSchema.extend({
  latePayment: IntentTransactionSchema.nullable().openapi({
    description: 'The transfer received after the session ended, as `paymentIntent.transactions` shows it',
  }),
});
/** The session with the transfer that took it beyond its total (null when the intent no longer shows it). */
const OverpaidSession = CheckoutSessionSchema.extend({
  overpayment: IntentTransactionSchema.nullable().openapi({
    description:
      'The transfer that took the session beyond its total, as `paymentIntent.transactions` shows it: the one that completed it with more than was due (sent right after `checkout_session.completed`), or one received after it completed, all of it beyond. `amountOverpaid` is the sum over, to be refunded, rounded down to 10^-8: sent when, and only when, a transfer makes it go up, at completion and after alike (an excess below 10^-8 of an asset with more decimals is not announced, nor shown, until transfers bring it to 0.00000001; each payment keeps its exact `amountRaw`). Counted once its transfer is final: a transfer withdrawn by a reorg before then never made an overpayment (`payment_intent.payment_failed` tells of a withdrawal the intent waited on)',
  }),
});
/** The intent with why its attempt failed: the transfer it waited for was withdrawn from the chain. */
const FailedPaymentIntent = PaymentIntentSchema.extend({
  lastPaymentError: z.object({
    type: z.literal('chain_error'),
    code: z.literal('payment_withdrawn'),
    message: z.string(),
    transactionHash: z.string().nullable(),
    network: z.string().nullable(),
    blockNumber: z.number().int().nullable(),
  }),
}).openapi('FailedPaymentIntent');

/** The `data.object` of an event type, and the name of its `object`. */
function payloadOf(type: string): { schema: z.ZodType; object: string } {
  if (type === TEST_WEBHOOK_EVENT_TYPE) return { schema: TestPayload, object: 'webhookEndpoint' };
  if (type === AUDIT_CHECKPOINT_EVENT_TYPE) return { schema: AuditCheckpoint, object: 'auditCheckpoint' };
  if (type === 'withdrawal_address.deleted') return { schema: DeletedWithdrawalAddress, object: 'withdrawalAddress' };
  if (type.startsWith('withdrawal_address.')) return { schema: WithdrawalAddressSchema, object: 'withdrawalAddress' };
  if (type === 'checkout_session.late_payment') return { schema: LatePaymentSession, object: 'checkoutSession' };
  if (type === 'checkout_session.overpayment') return { schema: OverpaidSession, object: 'checkoutSession' };
  if (type.startsWith('checkout_session.')) return { schema: CheckoutSessionSchema, object: 'checkoutSession' };
  if (type === 'payment_intent.payment_failed') return { schema: FailedPaymentIntent, object: 'paymentIntent' };
  if (type.startsWith('customer.subscription.')) return { schema: SubscriptionSchema, object: 'subscription' };
  if (type.startsWith('payment_intent.')) return { schema: PaymentIntentSchema, object: 'paymentIntent' };
  if (type.startsWith('invoice.')) return { schema: InvoiceEventObjectSchema, object: 'invoice' };
  throw new Error(`webhook payloads: no payload schema for ${type}`);
}

/** What the reference page says above the events: how a receiver checks, answers and dedupes them. */
export const WEBHOOKS_TAG_DESCRIPTION = [
  'Weir POSTs each event as JSON to every enabled endpoint subscribed to its type.',
  'Verify `X-Weir-Signature` over the raw body with the endpoint’s `secret` (the whole `whsec_…` string) and refuse a `t` more than 5 minutes old; each attempt is signed anew with the secret the endpoint has then, so after `POST /api/v1/webhook-endpoints/{id}/regenerate` only the new one verifies, unless it kept the old one signing (`previousSecretExpiresInSeconds`, up to a day): until the endpoint’s `previousSecretExpiresAt` the header carries a `v1` for each secret, the new one’s first, so accept a delivery when any `v1` matches.',
  'Answer any 2xx within 10 s; anything else (a redirect too) is retried after 30 s, doubling, 10 attempts in all, each logged in `GET /api/v1/webhook-endpoints/{id}/deliveries`.',
  `\`X-Webhook-Token\` (the secret itself, the reference’s header) may be absent: an operator can turn it off (\`${TOKEN_HEADER_SETTING}\`) so receivers’ request logs never hold the key; the signatures are always sent.`,
  'Events are not ordered, and one may arrive more than once: dedupe on the body’s `id` (also `X-Webhook-Id`), the same on every retry and resend.',
  'An event that happens while its endpoint is disabled is not sent to it, then or later.',
].join(' ');

/** The headers of every delivery, from the list the sender's own headers are checked against; one the operator may leave out is not required. */
const WebhookHeaders = z.object(
  Object.fromEntries(
    Object.entries(WEBHOOK_HEADER_DOCS).map(([name, doc]) => {
      const header = z.string().openapi({ description: doc.description });
      return [name, 'optional' in doc ? header.optional() : header];
    }),
  ),
);

/** What a kind with two names says under each: they are one event, and how an endpoint gets one name or the other. */
function twoNamesOf(type: string): string | undefined {
  const reference = referenceNameOf(type);
  const spec = specNameOf(reference);
  if (spec === undefined) return undefined;
  return `\`${spec}\` (the specification’s name) and \`${reference}\` (the reference API’s) are one event under two names, with the same payload: an endpoint may subscribe by either, and gets one delivery under the name it listed, \`${reference}\` when it listed both or only \`*\` (\`*\` with \`${spec}\` gets \`${spec}\`).`;
}

/** One OpenAPI webhook per event type Weir sends: the delivered body, its signature headers. */
export function webhookDefinitions(): RouteConfig[] {
  return [...WEBHOOK_EVENT_TYPES, TEST_WEBHOOK_EVENT_TYPE].map((type) => {
    const { schema, object } = payloadOf(referenceNameOf(type));
    const description = twoNamesOf(type);
    return {
      method: 'post',
      path: type,
      summary: `The ${type} event`,
      ...(description ? { description } : {}),
      tags: ['Webhooks'],
      request: {
        headers: WebhookHeaders,
        body: {
          content: {
            'application/json': {
              schema: z.object({
                id: z.string(),
                apiVersion: z.literal(WEBHOOK_API_VERSION),
                created: z.number().int().openapi({ description: 'Milliseconds since the epoch' }),
                livemode: z.boolean().openapi({
                  description:
                    'Whether the endpoint receiving it is a live one (else test): one receiver serving both tells them apart by it',
                }),
                object: z.string().openapi({ example: object }),
                type: z.literal(type),
                data: z.object({ object: schema }),
              }),
            },
          },
        },
      },
      responses: { 200: { description: 'Any 2xx acknowledges the delivery; anything else is retried' } },
    };
  });
}
