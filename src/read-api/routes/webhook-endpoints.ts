import Router from '@koa/router';
import { webhookEndpointAggregate, type WebhookEndpointChanges } from '../../actors/webhook-endpoint.ts';
import { COLLECTIONS, type WebhookDeliveryDoc, type WebhookEndpointDoc } from '../../projections/collections.ts';
import { publicWebhookEndpoint } from '../../projections/public-views.ts';
import { webhookDeliveryAggregate } from '../../../machines/webhook-delivery.aggregate.ts';
import { InvalidStateError, NotFoundError, ValidationError } from '../../shared/errors.ts';
import { generateWebhookSecret } from '../../tenancy/secrets.ts';
import {
  TEST_WEBHOOK_EVENT_TYPE,
  WEBHOOK_EVENT_TYPES,
  isWebhookEventType,
} from '../../webhooks/webhook-event-types.ts';
import { testEventIdOf } from '../../webhooks/webhook-events.ts';
import { deliveryIdOf } from '../../projections/webhooks.projection.ts';
import { checkWebhookTarget, WebhookTargetRefusedError, webhookTargetPolicy } from '../../webhooks/webhook-target.ts';
import { type ApiContext, type ApiDeps, type ApiState, idsOf } from '../api-context.ts';
import { commandFor, ownedBy } from '../command.ts';
import { listPage } from '../pagination.ts';
import {
  arrayOf,
  bodyObject,
  objectField,
  bool,
  idParams,
  integer,
  invalidFields,
  listOf,
  listQuery,
  DeletedMessage,
  notFound,
  optional,
  queryFilter,
  required,
  requiredText,
  text,
  url,
  withCode,
  z,
} from '../schema/fields.ts';
import {
  WebhookDeliverySchema,
  WebhookEndpointSchema,
  WebhookEventTypeSchema,
  WebhookTestSent,
} from '../schema/resources.ts';
import { schemaRoutes } from '../schema/route.ts';
import { issuing } from '../schema/validation-codes.ts';

/** A value as an error message quotes it: a short string as it is, anything else by its kind. */
function quoted(value: unknown): string {
  if (typeof value !== 'string')
    return value === null
      ? 'null'
      : Array.isArray(value)
        ? 'a list'
        : typeof value === 'object'
          ? 'an object'
          : `a ${typeof value}`;
  const chars = Array.from(value);
  return JSON.stringify(chars.length > 64 ? `${chars.slice(0, 64).join('')}…` : value);
}

/** Why `value` is not an event type an endpoint can subscribe to, or null when it is one. */
function eventTypeProblem(value: unknown): string | null {
  if (value === '*' || isWebhookEventType(value)) return null;
  return `${quoted(value)} is not an event type; use * or one of GET /api/v1/webhook-endpoints/event-types`;
}

const eventType = z
  .unknown()
  .superRefine((value, ctx) => {
    const problem = eventTypeProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: withCode(problem) });
  })
  .transform((value) => value as string)
  .openapi({
    type: 'string',
    enum: ['*', ...WEBHOOK_EVENT_TYPES],
    description:
      '`*` is every event type but `audit.checkpoint`, sent only to endpoints that name it. `payment_intent.failed` (the specification’s name) and `payment_intent.payment_failed` (the reference’s) are one event: it is sent under the name listed, the reference’s when both are or only `*` is',
  });

const events = arrayOf(eventType, { min: 1, max: 50 }).transform((list) => [...new Set(list)]);

/**
 * The kinds an endpoint receives: `{events: [...]}`, or the plain array the reference also takes.
 * Duplicates are dropped.
 */
const EnabledEvents = z
  .union(
    [
      issuing(
        ['parameter_missing'],
        objectField({ events: events.optional() }).transform((o, ctx) => {
          if (o.events === undefined) {
            ctx.addIssue({ code: 'custom', message: withCode('is required', 'parameter_missing'), path: ['events'] });
            return z.NEVER;
          }
          return { events: o.events };
        }),
      ),
      events.transform((list) => ({ events: list })),
    ],
    { error: withCode('must be an object') },
  )
  .openapi('EnabledEvents', {
    description: 'The event types sent to the endpoint: `{"events": [...]}` or the plain array',
    example: { events: ['checkout_session.completed', 'invoice.paid'] },
  });

const EndpointCreate = bodyObject({
  description: requiredText({ max: 500 }).openapi({
    description: 'Your name for the endpoint, to tell it apart',
    example: 'order fulfilment',
  }),
  url: url({ required: true }).openapi({ description: 'Where Weir POSTs each signed event' }),
  isDisabled: optional(bool()).openapi({
    description: 'true: no event is sent to it (a test event still is) and its pending deliveries are canceled',
  }),
  enabledEvents: required(EnabledEvents).openapi({
    description: 'The event types sent to it: `{"events": [...]}` or the plain array; `*` for all',
  }),
}).openapi('WebhookEndpointCreate', {
  example: {
    description: 'order fulfilment',
    url: 'https://shop.example/weir-webhooks',
    enabledEvents: { events: ['checkout_session.completed'] },
  },
});

const EndpointUpdate = bodyObject({
  description: optional(text({ max: 500 })),
  url: optional(url()),
  isDisabled: optional(bool()),
  enabledEvents: optional(EnabledEvents),
}).openapi('WebhookEndpointUpdate', { description: 'Only the fields sent change' });

/** The longest a replaced secret may keep signing: a day, as Stripe allows. */
export const MAX_PREVIOUS_SECRET_SECONDS = 86_400;

const RegenerateBody = bodyObject({
  previousSecretExpiresInSeconds: optional(integer({ min: 0, max: MAX_PREVIOUS_SECRET_SECONDS })).openapi({
    description:
      'How long the old secret keeps signing beside the new one, in seconds (0 to 86400, a day); 0 or absent: it stops at once',
    example: 3600,
  }),
}).openapi('WebhookSecretRegenerate', { description: 'All optional; no body at all is the same as `{}`' });

/** A signing secret as a reading key sees it: its kind and last four characters, as `maskedKey` shows an API key. */
export const maskedWebhookSecret = (secret: string): string => `whsec_…${secret.slice(-4)}`;

const presentDelivery = (d: WebhookDeliveryDoc) => ({
  id: d.id,
  endpointId: d.endpointId,
  eventId: d.eventId,
  eventType: d.eventType,
  status: d.status,
  attempts: d.attempts,
  nextAttemptAt: d.nextAttemptAt === null ? null : new Date(d.nextAttemptAt).toISOString(),
  createdAt: d.createdAt,
  attemptLog: d.log,
  canceled: d.canceled ?? null,
  resends: d.resends ?? [],
});

/** Webhook endpoints and their delivery logs. */
export function webhookEndpointRoutes(deps: ApiDeps): Router<ApiState> {
  const targets = deps.webhookTargets ?? webhookTargetPolicy();
  /** The endpoint URL, refused when it points at an internal address the key's environment may not reach. */
  const targetUrl = async (ctx: ApiContext, url: string): Promise<string> => {
    try {
      await checkWebhookTarget(url, ctx.state.tenant.environment, targets);
    } catch (error) {
      if (error instanceof WebhookTargetRefusedError)
        throw new ValidationError('url', error.message, 'url_not_allowed');
      throw error;
    }
    return url;
  };
  const router = new Router<ApiState>({ prefix: '/api/v1/webhook-endpoints' });
  const endpoints = deps.readStore.collection<WebhookEndpointDoc>(COLLECTIONS.webhookEndpoints);
  const deliveries = deps.readStore.collection<WebhookDeliveryDoc>(COLLECTIONS.webhookDeliveries);
  // The secret signs deliveries: whoever holds it can forge a payment's webhook, so a reading key
  // (read, audit) sees it masked as API keys are; full keys and the dashboard (whose roles decide) see it.
  const present = (ctx: ApiContext, doc: WebhookEndpointDoc) => {
    const secret = deps.secretBox.open(doc.sealedSecret);
    const shown = (ctx.state.tenant.scope ?? 'full') === 'full' ? secret : maskedWebhookSecret(secret);
    return publicWebhookEndpoint(doc, shown, deps.clock.now());
  };
  const load = async (ctx: ApiContext) => {
    const doc = await endpoints.get(ctx.params.id!);
    if (!ownedBy(ctx, doc)) throw new NotFoundError('webhook endpoint', ctx.params.id!);
    if (doc.deleted) throw new NotFoundError('webhook endpoint', doc.id, 'it was deleted');
    return doc;
  };
  const reload = async (ctx: ApiContext, id: string) => present(ctx, (await endpoints.get(id))!);

  const api = schemaRoutes(router, { tag: 'Webhook endpoints', auth: 'secretKey' });
  const params = idParams('webhook endpoint');
  const badUrl = invalidFields('parameter_invalid_string_empty', 'url_not_allowed');

  api.route(
    {
      method: 'get',
      path: '/',
      summary: 'List webhook endpoints',
      description:
        "The organization's endpoints in the key's environment (test or live), newest first, deleted ones left out; filter by `ids` and `isDisabled`.",
      query: listQuery({
        ids: queryFilter('Comma-separated endpoint ids'),
        isDisabled: queryFilter('true or false'),
      }),
      response: listOf(WebhookEndpointSchema),
      errors: [invalidFields()],
    },
    (ctx) =>
      listPage(ctx, endpoints, {
        base: { deleted: false },
        present: (doc) => present(ctx, doc),
        filters: { ids: { field: 'id', kind: 'csv' }, isDisabled: { kind: 'boolean' } },
      }),
  );

  api.route(
    {
      method: 'post',
      path: '/',
      summary: 'Create a webhook endpoint',
      description:
        'Test keys may point at internal addresses (a local server); live keys only at public ones, unless the operator allows it.',
      body: EndpointCreate,
      response: WebhookEndpointSchema,
      errors: [badUrl],
    },
    async (ctx, { body }) => {
      const { tenant } = ctx.state;
      const id = idsOf(ctx)();
      await commandFor(deps, ctx, webhookEndpointAggregate, id, {
        type: 'CreateWebhookEndpoint',
        endpoint: {
          id,
          organizationId: tenant.organizationId,
          environment: tenant.environment,
          description: body.description,
          url: await targetUrl(ctx, body.url),
          sealedSecret: deps.secretBox.seal(generateWebhookSecret()),
          isDisabled: body.isDisabled ?? false,
          enabledEvents: body.enabledEvents,
        },
      });
      return reload(ctx, id);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/event-types',
      summary: 'List the event types an endpoint can subscribe to',
      response: z.object({ events: z.array(WebhookEventTypeSchema) }),
    },
    () => ({ events: ['*', ...WEBHOOK_EVENT_TYPES] }),
  );

  api.route(
    {
      method: 'get',
      path: '/:id',
      summary: 'Read a webhook endpoint',
      params,
      response: WebhookEndpointSchema,
      errors: [notFound('webhook endpoint')],
    },
    async (ctx) => present(ctx, await load(ctx)),
  );

  api.route(
    {
      method: 'put',
      path: '/:id',
      summary: 'Update a webhook endpoint',
      params,
      body: EndpointUpdate,
      response: WebhookEndpointSchema,
      errors: [badUrl, notFound('webhook endpoint')],
    },
    async (ctx, { body }) => {
      const endpoint = await load(ctx);
      const changes: WebhookEndpointChanges = {};
      if (body.description !== undefined) changes.description = body.description;
      if (body.url !== undefined) changes.url = await targetUrl(ctx, body.url);
      if (body.isDisabled !== undefined) changes.isDisabled = body.isDisabled;
      if (body.enabledEvents) changes.enabledEvents = body.enabledEvents;
      if (Object.keys(changes).length === 0)
        throw new ValidationError(null, 'nothing to update: send description, url, isDisabled or enabledEvents');
      await commandFor(deps, ctx, webhookEndpointAggregate, endpoint.id, { type: 'UpdateWebhookEndpoint', changes });
      return reload(ctx, endpoint.id);
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/:id',
      summary: 'Delete a webhook endpoint',
      params,
      response: DeletedMessage,
      errors: [notFound('webhook endpoint')],
    },
    async (ctx) => {
      const endpoint = await load(ctx);
      await commandFor(deps, ctx, webhookEndpointAggregate, endpoint.id, { type: 'DeleteWebhookEndpoint' });
      return { statusCode: 200 as const, message: `webhook endpoint ${endpoint.id} deleted` };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/:id/regenerate',
      summary: "Replace a webhook endpoint's signing secret",
      description:
        'Without a body (as the reference sends it) the old secret stops signing at once. With `previousSecretExpiresInSeconds` it keeps signing for that long: `X-Weir-Signature` carries a `v1` for the new secret and one for the old, so a receiver still on the old one passes while you deploy the new one.',
      params,
      body: RegenerateBody,
      bodyOptional: true,
      response: WebhookEndpointSchema,
      errors: [invalidFields(), notFound('webhook endpoint')],
    },
    async (ctx, { body }) => {
      const endpoint = await load(ctx);
      await commandFor(deps, ctx, webhookEndpointAggregate, endpoint.id, {
        type: 'RegenerateWebhookSecret',
        sealedSecret: deps.secretBox.seal(generateWebhookSecret()),
        keepPreviousForSeconds: body.previousSecretExpiresInSeconds ?? 0,
      });
      return reload(ctx, endpoint.id);
    },
  );

  api.route(
    {
      method: 'post',
      path: '/:id/test',
      summary: 'Send a test event to a webhook endpoint',
      description:
        'Sends `webhook_endpoint.test`, whatever the endpoint subscribes to, even to a disabled endpoint; its delivery shows in `GET …/{id}/deliveries` like any other. The answer names that delivery (`deliveryId`) and the event (`eventId`) beside the reference’s `statusCode` and `message`.',
      params,
      response: WebhookTestSent,
      errors: [notFound('webhook endpoint')],
    },
    async (ctx) => {
      const endpoint = await load(ctx);
      const testId = idsOf(ctx)();
      await commandFor(deps, ctx, webhookEndpointAggregate, endpoint.id, { type: 'SendTestWebhook', testId });
      // The ids the webhooks projection gives the test event and its delivery (both derived, not stored).
      const eventId = testEventIdOf(testId);
      return {
        statusCode: 200 as const,
        message: `test event sent to webhook endpoint ${endpoint.id}`,
        deliveryId: deliveryIdOf(eventId, endpoint.id),
        eventId,
      };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/:id/deliveries',
      summary: "List a webhook endpoint's deliveries",
      params,
      query: listQuery({
        status: queryFilter('pending, succeeded, failed or canceled'),
        eventType: queryFilter(
          'An event type, the name it was sent under (`payment_intent.failed` or `payment_intent.payment_failed`, as subscribed)',
        ),
        eventId: queryFilter("The event's id"),
      }),
      response: listOf(WebhookDeliverySchema),
      errors: [invalidFields(), notFound('webhook endpoint')],
    },
    async (ctx) => {
      const endpoint = await load(ctx);
      return listPage(ctx, deliveries, {
        base: { endpointId: endpoint.id },
        filters: { status: { values: ['pending', 'succeeded', 'failed', 'canceled'] }, eventType: {}, eventId: {} },
        present: presentDelivery,
      });
    },
  );

  api.route(
    {
      method: 'post',
      path: '/:id/deliveries/:deliveryId/resend',
      summary: 'Send a delivery again',
      description:
        'Makes one more attempt now, recorded in the delivery’s `attemptLog` like the others. On a delivery that ended ' +
        '(succeeded, failed or canceled) it is that one attempt: if it fails, the delivery ends `failed`, with no ' +
        'retries. On a delivery still being retried it brings the next retry forward; the schedule goes on after it.',
      params: params.extend({
        deliveryId: z
          .string()
          .openapi({ description: "The delivery's id", example: '7c9e6679-7425-40de-944b-e07fc1f90ae7' }),
      }),
      response: WebhookDeliverySchema,
      errors: [
        notFound('webhook endpoint or delivery'),
        { status: 400, codes: ['endpoint_disabled'], description: 'The endpoint is disabled: enable it first' },
      ],
    },
    async (ctx, { params: { deliveryId } }) => {
      const endpoint = await load(ctx);
      const delivery = await deliveries.get(deliveryId);
      if (!delivery || delivery.endpointId !== endpoint.id) throw new NotFoundError('webhook delivery', deliveryId);
      // A disabled endpoint takes nothing but tests: the attempt would only be canceled.
      if (endpoint.isDisabled && delivery.eventType !== TEST_WEBHOOK_EVENT_TYPE)
        throw new InvalidStateError(
          `webhook endpoint ${endpoint.id} is disabled: enable it before resending`,
          'endpoint_disabled',
        );
      await commandFor(deps, ctx, webhookDeliveryAggregate, delivery.id, {
        type: 'ResendDelivery',
        by: ctx.state.tenant.actor,
      });
      return presentDelivery((await deliveries.get(delivery.id))!);
    },
  );

  return router;
}
