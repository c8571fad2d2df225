import Router from '@koa/router';
import { webhookEndpointAggregate, type WebhookEndpointChanges } from '../../actors/webhook-endpoint.ts';
import { COLLECTIONS, type WebhookDeliveryDoc, type WebhookEndpointDoc } from '../../projections/collections.ts';
import { publicWebhookEndpoint } from '../../projections/public-views.ts';
import { NotFoundError, ValidationError } from '../../shared/errors.ts';
import {
  asObject,
  optionalArray,
  optionalBoolean,
  optionalObject,
  optionalString,
  optionalUrl,
  requiredString,
  requiredUrl,
} from '../../shared/input.ts';
import { generateWebhookSecret } from '../../tenancy/secrets.ts';
import { SPEC_EVENT_TYPE_NAMES, WEBHOOK_EVENT_TYPES, isWebhookEventType } from '../../webhooks/webhook-event-types.ts';
import { checkWebhookTarget, WebhookTargetRefusedError, webhookTargetPolicy } from '../../webhooks/webhook-target.ts';
import { type ApiContext, type ApiDeps, type ApiState, idsOf } from '../api-context.ts';
import { commandFor, ownedBy } from '../command.ts';
import { listPage } from '../pagination.ts';

function enabledEvents(body: Record<string, unknown>, required: boolean): { events: string[] } | undefined {
  const o = optionalObject(body, 'enabledEvents');
  if (!o) {
    if (required) throw new ValidationError('enabledEvents', 'is required', 'parameter_missing');
    return undefined;
  }
  const events = optionalArray(o, 'events', 'enabledEvents', { min: 1, max: 50 });
  if (!events) throw new ValidationError('enabledEvents.events', 'is required', 'parameter_missing');
  events.forEach((e, i) => {
    if (e === '*' || isWebhookEventType(e)) return;
    const sentAs =
      typeof e === 'string' && Object.hasOwn(SPEC_EVENT_TYPE_NAMES, e) ? SPEC_EVENT_TYPE_NAMES[e] : undefined;
    if (sentAs)
      throw new ValidationError(
        `enabledEvents.events[${i}]`,
        `${JSON.stringify(e)} is sent as ${sentAs}: subscribe to that`,
      );
    throw new ValidationError(
      `enabledEvents.events[${i}]`,
      `${JSON.stringify(e)} is not an event type; use * or one of GET /api/v1/webhook-endpoints/event-types`,
    );
  });
  return { events: [...new Set(events as string[])] };
}

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
  const present = (doc: WebhookEndpointDoc) => publicWebhookEndpoint(doc, deps.secretBox.open(doc.sealedSecret));
  const load = async (ctx: ApiContext) => {
    const doc = await endpoints.get(ctx.params.id!);
    if (!ownedBy(ctx, doc) || doc.deleted) throw new NotFoundError('webhook endpoint', ctx.params.id!);
    return doc;
  };
  const reload = async (id: string) => present((await endpoints.get(id))!);

  router.get('/', async (ctx) => {
    ctx.body = await listPage(ctx, endpoints, {
      base: { deleted: false },
      present,
      filters: { ids: { field: 'id', kind: 'csv' }, isDisabled: { kind: 'boolean' } },
    });
  });

  router.post('/', async (ctx) => {
    const body = asObject(ctx.state.body, '');
    const { tenant } = ctx.state;
    const id = idsOf(ctx)();
    await commandFor(deps, ctx, webhookEndpointAggregate, id, {
      type: 'CreateWebhookEndpoint',
      endpoint: {
        id,
        organizationId: tenant.organizationId,
        environment: tenant.environment,
        description: requiredString(body, 'description', '', { max: 500 }),
        url: await targetUrl(ctx, requiredUrl(body, 'url')),
        sealedSecret: deps.secretBox.seal(generateWebhookSecret()),
        isDisabled: optionalBoolean(body, 'isDisabled') ?? false,
        enabledEvents: enabledEvents(body, true)!,
      },
    });
    ctx.body = await reload(id);
  });

  router.get('/event-types', (ctx) => {
    ctx.body = { events: ['*', ...WEBHOOK_EVENT_TYPES] };
  });

  router.get('/:id', async (ctx) => {
    ctx.body = present(await load(ctx));
  });

  router.put('/:id', async (ctx) => {
    const endpoint = await load(ctx);
    const body = asObject(ctx.state.body, '');
    const changes: WebhookEndpointChanges = {};
    const description = optionalString(body, 'description', '', { max: 500 });
    if (description !== undefined) changes.description = description;
    const url = optionalUrl(body, 'url');
    if (url !== undefined) changes.url = await targetUrl(ctx, url);
    const isDisabled = optionalBoolean(body, 'isDisabled');
    if (isDisabled !== undefined) changes.isDisabled = isDisabled;
    const events = enabledEvents(body, false);
    if (events) changes.enabledEvents = events;
    if (Object.keys(changes).length === 0)
      throw new ValidationError(null, 'nothing to update: send description, url, isDisabled or enabledEvents');
    await commandFor(deps, ctx, webhookEndpointAggregate, endpoint.id, { type: 'UpdateWebhookEndpoint', changes });
    ctx.body = await reload(endpoint.id);
  });

  router.delete('/:id', async (ctx) => {
    const endpoint = await load(ctx);
    await commandFor(deps, ctx, webhookEndpointAggregate, endpoint.id, { type: 'DeleteWebhookEndpoint' });
    ctx.body = { success: true };
  });

  router.post('/:id/regenerate', async (ctx) => {
    const endpoint = await load(ctx);
    await commandFor(deps, ctx, webhookEndpointAggregate, endpoint.id, {
      type: 'RegenerateWebhookSecret',
      sealedSecret: deps.secretBox.seal(generateWebhookSecret()),
    });
    ctx.body = await reload(endpoint.id);
  });

  router.post('/:id/test', async (ctx) => {
    const endpoint = await load(ctx);
    await commandFor(deps, ctx, webhookEndpointAggregate, endpoint.id, {
      type: 'SendTestWebhook',
      testId: idsOf(ctx)(),
    });
    ctx.body = { success: true };
  });

  router.get('/:id/deliveries', async (ctx) => {
    const endpoint = await load(ctx);
    ctx.body = await listPage(ctx, deliveries, {
      base: { endpointId: endpoint.id },
      filters: { status: { values: ['pending', 'succeeded', 'failed', 'canceled'] }, eventType: {}, eventId: {} },
      present: (d) => ({
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
      }),
    });
  });

  return router;
}
