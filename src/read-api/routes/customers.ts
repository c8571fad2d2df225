import Router from '@koa/router';
import { customerAggregate } from '../../actors/customer.ts';
import { subscriptionAggregate } from '../../../machines/subscription.aggregate.ts';
import { CUSTOMERS, type CustomerDoc } from '../../projections/customers.projection.ts';
import { ENDED_STATUSES } from '../../../machines/subscription.decide.ts';
import { SUBSCRIPTIONS, type SubscriptionDoc } from '../../projections/subscriptions.projection.ts';
import { NotFoundError } from '../../shared/errors.ts';
import { isUuid } from '../../shared/ids.ts';
import { CustomerCreate, CustomerSchema, CustomerUpdate } from '../schema/customer.ts';
import { DeletedMessage, idParams, invalidFields, listOf, listQuery, notFound, queryFilter } from '../schema/fields.ts';
import { schemaRoutes } from '../schema/route.ts';
import { type ApiContext, type ApiDeps, type ApiState, idsOf } from '../api-context.ts';
import { commandFor, ownedBy } from '../command.ts';
import { listPage, VISIBILITY_FILTER } from '../pagination.ts';

/** The `cancellationComment` of a subscription ended because its customer was deleted. */
export const CUSTOMER_DELETED_COMMENT = 'ended because its customer was deleted';

/** The customer as the API shows it (the reference's CustomerDto, plus tenant fields). */
export function presentCustomer(doc: CustomerDoc) {
  const { _id, emailLower, deleted, deletedAt, taxIds = [], ...customer } = doc;
  return {
    ...customer,
    taxIds: { object: 'list' as const, data: taxIds.map((t) => ({ ...t, customerId: doc.id })) },
    customerNumber: doc.id.slice(0, 8).toUpperCase(),
    livemode: doc.environment === 'live',
  };
}

/**
 * Customers: create, list (by `email`, `ids`, `customerReferenceId`, `visibility`, `createdAt`), read, update,
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

  const api = schemaRoutes(router, { tag: 'Customers', auth: 'secretKey' });
  const params = idParams('customer');

  api.route(
    {
      method: 'post',
      path: '/customers',
      summary: 'Create a customer',
      body: CustomerCreate,
      response: CustomerSchema,
      errors: [invalidFields()],
    },
    async (ctx, { body: fields }) => {
      const { tenant } = ctx.state;
      const id = idsOf(ctx)();
      await commandFor(deps, ctx, customerAggregate, id, {
        type: 'CreateCustomer',
        customer: {
          id,
          organizationId: tenant.organizationId,
          environment: tenant.environment,
          email: fields.email,
          name: fields.name ?? null,
          phone: fields.phone ?? null,
          organizationName: fields.organizationName ?? null,
          customerReferenceId: fields.customerReferenceId ?? null,
          address: fields.address ?? null,
          metadata: fields.metadata ?? {},
          visibility: fields.visibility ?? 10,
          // Like a customer that never had one, one created without shipping reads back without it.
          ...(fields.shipping ? { shipping: fields.shipping } : {}),
          ...(fields.taxIds?.data.length ? { taxIds: fields.taxIds.data } : {}),
        },
      });
      return presentCustomer((await customers.get(id))!);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/customers',
      summary: 'List customers',
      description: 'Newest first; filter by `email` (any case), `ids`, `customerReferenceId` and `visibility`.',
      query: listQuery({
        email: queryFilter('Only the customer with this email address (compared without case)'),
        visibility: queryFilter('10: the customers shown in the dashboard, 20: those kept to the API'),
        ids: queryFilter('Comma-separated customer ids'),
        customerReferenceId: queryFilter('Your own reference for the customer'),
      }),
      response: listOf(CustomerSchema),
      errors: [invalidFields()],
    },
    async (ctx, { query }) =>
      listPage(ctx, customers, {
        base: {
          deleted: false,
          ...(query.email ? { emailLower: query.email.toLowerCase() } : {}),
        },
        filters: { ids: { field: 'id', kind: 'csv' }, customerReferenceId: {}, visibility: VISIBILITY_FILTER },
        present: presentCustomer,
      }),
  );

  api.route(
    {
      method: 'get',
      path: '/customers/:id',
      summary: 'Read a customer',
      params,
      response: CustomerSchema,
      errors: [notFound('customer')],
    },
    async (ctx, { params: { id } }) => presentCustomer(await loadCustomer(ctx, id)),
  );

  api.route(
    {
      method: 'put',
      path: '/customers/:id',
      summary: 'Update a customer',
      description: 'Only the fields sent change; `null` clears a field (`metadata: null` clears every key).',
      params,
      body: CustomerUpdate,
      response: CustomerSchema,
      errors: [invalidFields(), notFound('customer')],
    },
    async (ctx, { params: { id }, body: changes }) => {
      const existing = await loadCustomer(ctx, id);
      const { taxIds, ...fields } = changes;
      // Only what the body names: a field left out stays as it is; `taxIds: null` clears them.
      const named = {
        ...Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)),
        ...(taxIds === undefined ? {} : { taxIds: taxIds?.data ?? [] }),
      };
      await commandFor(deps, ctx, customerAggregate, existing.id, { type: 'UpdateCustomer', changes: named });
      return presentCustomer((await customers.get(existing.id))!);
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/customers/:id',
      summary: 'Delete a customer',
      description: "Ends the customer's subscriptions that have not ended, at once, then deletes the customer.",
      params,
      response: DeletedMessage,
      errors: [notFound('customer')],
    },
    async (ctx, { params: { id } }) => {
      const existing = await loadCustomer(ctx, id);
      // Deleting a customer stops billing them: each subscription of theirs that has not ended ends
      // at once (its open renewal for a period begun stays owed, see subscription-billing), before the customer goes, so a request that fails
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
      return { statusCode: 200, message: `customer ${existing.id} deleted` };
    },
  );

  return router;
}
