import Router from '@koa/router';
import { checkoutSessionAggregate } from '../../../machines/checkout-session.aggregate.ts';
import type { CheckoutSession } from '../../../machines/checkout-session.types.ts';
import { isEmail } from '../../actors/customer.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from '../../projections/collections.ts';
import { CUSTOMERS, type CustomerDoc } from '../../projections/customers.projection.ts';
import { sessionPresenter } from './checkout-sessions.ts';
import { InvalidStateError, NotFoundError, ValidationError } from '../../shared/errors.ts';
import { deterministicId } from '../../shared/ids.ts';
import { PaymentIntentSchema, PaymentReceiptSchema } from '../schema/checkout-session.ts';
import {
  bodyObject,
  idParams,
  invalidFields,
  listOf,
  listQuery,
  notFound,
  optional,
  queryFilter,
  text,
} from '../schema/fields.ts';
import { schemaRoutes } from '../schema/route.ts';
import type { ApiContext, ApiDeps, ApiState } from '../api-context.ts';
import { commandFor } from '../command.ts';
import { type ListFilters, listPage } from '../pagination.ts';

const INTENT_STATUSES = ['requires_payment_method', 'processing', 'succeeded', 'canceled'] as const;

/** The list's filters, on the session documents that hold the intents. */
const INTENT_LIST_FILTERS: ListFilters = {
  ids: { field: 'paymentIntent.id', kind: 'csv' },
  checkoutSessionId: { field: 'id', kind: 'csv' },
  customerId: {},
  status: { field: 'paymentIntent.status', values: INTENT_STATUSES },
};

/** A receipt's number, the same every time it is sent: `RCPT-` and the first 10 hex digits of the intent's id. */
export const receiptNumberOf = (paymentIntentId: string): string =>
  `RCPT-${paymentIntentId
    .replace(/[^0-9a-fA-F]/g, '')
    .slice(0, 10)
    .toUpperCase()}`;

/** A session's payment intent as `/payment-intents` shows it: with its session's id and refund record. */
export function paymentIntentPresenter(deps: Pick<ApiDeps, 'rail' | 'publicUrl'>) {
  const presentSession = sessionPresenter(deps);
  return (session: CheckoutSession) => {
    const { paymentIntent } = presentSession(session);
    return {
      ...paymentIntent,
      object: 'payment_intent' as const,
      checkoutSessionId: session.id,
      isMarkRefunded: paymentIntent.isMarkRefunded ?? false,
      markRefundedAt: paymentIntent.markRefundedAt ?? null,
      markRefundedComment: paymentIntent.markRefundedComment ?? null,
    };
  };
}

/**
 * The payment intents of the tenant's checkout sessions (each session has one, shown on it as
 * `paymentIntent`): mark one refunded, and mail its payer a receipt (through the mail outbox:
 * recorded as `PaymentReceiptRequested`, sent by the mail dispatcher).
 */
export function paymentIntentRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1/payment-intents' });
  const sessions = deps.readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
  const customers = deps.readStore.collection<CustomerDoc>(CUSTOMERS);

  /** The tenant's session whose intent this is; another tenant's, or none, is a 404. */
  const sessionOf = async (ctx: ApiContext, id: string): Promise<CheckoutSessionDoc> => {
    const { organizationId, environment } = ctx.state.tenant;
    const [session] = await sessions.find({ 'paymentIntent.id': id, organizationId, environment }, { limit: 1 });
    if (!session) throw new NotFoundError('payment intent', id);
    return session;
  };

  const present = paymentIntentPresenter(deps);

  const api = schemaRoutes(router, { tag: 'Payment intents', auth: 'secretKey' });
  const params = idParams('payment intent');
  const missing = notFound('payment intent');

  // Each session holds one intent: the list pages the sessions, newest first, and shows their intents.
  api.route(
    {
      method: 'get',
      path: '/',
      summary: 'List payment intents',
      description: "The intents of the organization's checkout sessions, newest first.",
      query: listQuery({
        ids: queryFilter('Comma-separated payment intent ids'),
        checkoutSessionId: queryFilter("Comma-separated checkout session ids: those sessions' intents"),
        customerId: queryFilter("The customer's sessions' intents"),
        status: queryFilter(INTENT_STATUSES.join(', ')),
      }),
      response: listOf(PaymentIntentSchema),
      errors: [invalidFields()],
    },
    (ctx) => listPage(ctx, sessions, { present, filters: INTENT_LIST_FILTERS }),
  );

  api.route(
    {
      method: 'get',
      path: '/:id',
      summary: 'Read a payment intent',
      description: 'The object `payment_intent.*` webhooks carry as `data.object`, as it is now.',
      params,
      response: PaymentIntentSchema,
      errors: [missing],
    },
    async (ctx, { params: { id } }) => present(await sessionOf(ctx, id)),
  );

  // Weir holds no funds, so it sends nothing back: this records that the merchant refunded the payer itself.
  api.route(
    {
      method: 'post',
      path: '/:id/mark-as-refund',
      summary: 'Record that the payment was refunded',
      description:
        'Weir holds no funds and sends nothing back: this records that the merchant refunded the payer itself.',
      params,
      body: bodyObject({
        markRefundedComment: optional(text({ max: 500 })).openapi({
          description: "Your own note of how it was settled (a refund's transaction hash): not shown to the payer",
        }),
      }),
      bodyOptional: true,
      response: PaymentIntentSchema,
      errors: [invalidFields('status_transition_invalid'), missing],
      examples: { request: { markRefundedComment: 'refunded by bank transfer' } },
    },
    async (ctx, { params: { id }, body }) => {
      const session = await sessionOf(ctx, id);
      await commandFor(deps, ctx, checkoutSessionAggregate, session.id, {
        type: 'MarkPaymentRefunded',
        comment: body.markRefundedComment ?? null,
      });
      return present((await sessions.get(session.id))!);
    },
  );

  api.route(
    {
      method: 'post',
      path: '/:id/payment-receipts/send',
      summary: 'Mail the payer a receipt',
      description:
        'Recorded on the session and sent by the mail dispatcher (which tries again while the mail server fails).',
      params,
      response: PaymentReceiptSchema,
      errors: [invalidFields('status_transition_invalid'), missing],
    },
    async (ctx, { params: { id } }) => {
      const session = await sessionOf(ctx, id);
      if (session.paymentStatus !== 'paid')
        throw new InvalidStateError(
          `checkout session ${session.id} is ${session.status} and not paid; a receipt follows a payment`,
        );
      const customer = session.customerId ? await customers.get(session.customerId) : null;
      const known =
        customer && customer.organizationId === session.organizationId && !customer.deleted ? customer : null;
      const to = session.customerDetails?.email ?? known?.email ?? null;
      if (!to || !isEmail(to))
        throw new ValidationError(
          'customerDetails.email',
          "is required: the payer left no email address and the session's customer has none on record",
          'parameter_missing',
        );
      const receiptNumber = receiptNumberOf(session.paymentIntent.id);
      // Recorded on the session; the mail dispatcher sends it (and tries again while the mail server fails).
      await commandFor(deps, ctx, checkoutSessionAggregate, session.id, {
        type: 'RequestPaymentReceipt',
        to,
        receiptNumber,
      });
      const at = new Date(deps.clock.now()).toISOString();
      return {
        id: deterministicId(`payment-receipt:${session.paymentIntent.id}`),
        object: 'payment_receipt',
        createdAt: session.completedAt ?? session.updatedAt,
        updatedAt: at,
        organizationId: session.organizationId,
        paymentIntentId: session.paymentIntent.id,
        checkoutSessionId: session.id,
        name: `Receipt ${receiptNumber}`,
        receiptNumber,
        uri: session.url,
        to,
        requestedAt: at,
      };
    },
  );

  return router;
}
