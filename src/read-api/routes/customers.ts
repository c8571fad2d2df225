import Router from '@koa/router';
import {
  addressInput,
  assertEmail,
  assertPhone,
  customerAggregate,
  shippingInput,
  type CustomerFields,
} from '../../actors/customer.ts';
import { subscriptionAggregate } from '../../../machines/subscription.aggregate.ts';
import { CUSTOMERS, type CustomerDoc } from '../../projections/customers.projection.ts';
import { ENDED_STATUSES, SUBSCRIPTIONS, type SubscriptionDoc } from '../../projections/subscriptions.projection.ts';
import { NotFoundError, ValidationError } from '../../shared/errors.ts';
import { isUuid } from '../../shared/ids.ts';
import {
  asObject,
  nullableString,
  optionalEnum,
  optionalMetadata,
  optionalString,
  requiredString,
  type Input,
} from '../../shared/input.ts';
import { type ApiContext, type ApiDeps, type ApiState, idsOf } from '../api-context.ts';
import { commandFor, ownedBy } from '../command.ts';
import { listPage } from '../pagination.ts';

const VISIBILITIES = ['10', '20'] as const;
/** The `cancellationComment` of a subscription ended because its customer was deleted. */
export const CUSTOMER_DELETED_COMMENT = 'ended because its customer was deleted';

/** The customer as the API shows it (the reference's CustomerDto, plus tenant fields). */
export function presentCustomer(doc: CustomerDoc) {
  const { _id, emailLower, deleted, deletedAt, ...customer } = doc;
  return { ...customer, customerNumber: doc.id.slice(0, 8).toUpperCase(), livemode: doc.environment === 'live' };
}

function visibilityOf(o: Input): number | undefined {
  const v = o.visibility;
  if (v === undefined || v === null) return undefined;
  const text = typeof v === 'number' ? String(v) : v;
  return Number(optionalEnum({ visibility: text }, 'visibility', VISIBILITIES));
}

/**
 * Fields of a create (everything) or an update (only what the body names). `taxIds` is refused:
 * Weir keeps no tax ids on customers (as for a checkout session's `customerData`).
 */
function customerFields(body: Input, mode: 'create' | 'update'): Partial<CustomerFields> {
  if ('taxIds' in body)
    throw new ValidationError('taxIds', 'is not supported: Weir keeps no tax ids on customers; leave it out');
  const email =
    mode === 'create'
      ? requiredString(body, 'email', '', { max: 254 })
      : optionalString(body, 'email', '', { max: 254, min: 1 });
  if (email !== undefined) assertEmail(email);
  const phone = nullableString(body, 'phone', 40);
  if (phone) assertPhone(phone);
  return {
    email,
    name: nullableString(body, 'name', 250),
    phone,
    organizationName: nullableString(body, 'organizationName', 250),
    customerReferenceId: nullableString(body, 'customerReferenceId', 200),
    address: addressInput(body, 'address'),
    shipping: shippingInput(body, 'shipping'),
    metadata: 'metadata' in body && body.metadata === null ? {} : optionalMetadata(body, 'metadata'),
    visibility: visibilityOf(body),
  };
}

/**
 * Customers: create, list (by `email`, `ids`, `customerReferenceId`, `createdAt`), read, update,
 * delete (which ends the customer's subscriptions at once, as their billing has no one to bill).
 */
export function customerRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1' });
  const customers = deps.readStore.collection<CustomerDoc>(CUSTOMERS);
  const subscriptions = deps.readStore.collection<SubscriptionDoc>(SUBSCRIPTIONS);

  const loadCustomer = async (ctx: ApiContext, id: string) => {
    const doc = isUuid(id) ? await customers.get(id) : null;
    if (!ownedBy(ctx, doc) || doc.deleted) throw new NotFoundError('customer', id);
    return doc;
  };

  router.post('/customers', async (ctx) => {
    const body = asObject(ctx.state.body, '');
    const { tenant } = ctx.state;
    const fields = customerFields(body, 'create');
    const id = idsOf(ctx)();
    await commandFor(deps, ctx, customerAggregate, id, {
      type: 'CreateCustomer',
      customer: {
        id,
        organizationId: tenant.organizationId,
        environment: tenant.environment,
        email: fields.email!,
        name: fields.name ?? null,
        phone: fields.phone ?? null,
        organizationName: fields.organizationName ?? null,
        customerReferenceId: fields.customerReferenceId ?? null,
        address: fields.address ?? null,
        metadata: fields.metadata ?? {},
        visibility: fields.visibility ?? 10,
        // Like a customer that never had one, one created without shipping reads back without it.
        ...(fields.shipping ? { shipping: fields.shipping } : {}),
      },
    });
    ctx.body = presentCustomer((await customers.get(id))!);
  });

  router.get('/customers', async (ctx) => {
    const raw = ctx.query.email;
    const email = Array.isArray(raw) ? raw[raw.length - 1] : raw;
    ctx.body = await listPage(ctx, customers, {
      base: { deleted: false, ...(email ? { emailLower: email.toLowerCase() } : {}) },
      filters: { ids: { field: 'id', kind: 'csv' }, customerReferenceId: {} },
      present: presentCustomer,
    });
  });

  router.get('/customers/:id', async (ctx) => {
    ctx.body = presentCustomer(await loadCustomer(ctx, ctx.params.id!));
  });

  router.put('/customers/:id', async (ctx) => {
    const existing = await loadCustomer(ctx, ctx.params.id!);
    const changes = customerFields(asObject(ctx.state.body, ''), 'update');
    await commandFor(deps, ctx, customerAggregate, existing.id, { type: 'UpdateCustomer', changes });
    ctx.body = presentCustomer((await customers.get(existing.id))!);
  });

  router.delete('/customers/:id', async (ctx) => {
    const existing = await loadCustomer(ctx, ctx.params.id!);
    // Deleting a customer stops billing them: each subscription of theirs that has not ended ends
    // at once (its open renewals are voided), before the customer goes, so a request that fails
    // part way leaves the customer in place and its retry finishes the job.
    const { organizationId, environment } = ctx.state.tenant;
    const running = await subscriptions.find({
      organizationId,
      environment,
      customerId: existing.id,
      status: { $nin: [...ENDED_STATUSES] },
    });
    for (const subscription of running) {
      await commandFor(deps, ctx, subscriptionAggregate, subscription.id, {
        type: 'EndSubscription',
        comment: CUSTOMER_DELETED_COMMENT,
      });
    }
    await commandFor(deps, ctx, customerAggregate, existing.id, { type: 'DeleteCustomer' });
    ctx.body = { statusCode: 200, message: `customer ${existing.id} deleted` };
  });

  return router;
}
