import Router from '@koa/router';
import { API_KEY_SCOPES, apiKeyAggregate } from '../../actors/api-key.ts';
import { COLLECTIONS, type ApiKeyDoc } from '../../projections/collections.ts';
import { publicApiKey } from '../../projections/public-views.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../shared/errors.ts';
import { generateApiKey, hashSecret } from '../../tenancy/secrets.ts';
import { createApiKeyUsage } from '../api-key-usage.ts';
import { type ApiContext, type ApiDeps, type ApiState, idsOf } from '../api-context.ts';
import { commandFor, ownedBy } from '../command.ts';
import { listPage } from '../pagination.ts';
import {
  bodyObject,
  idParams,
  invalidFields,
  listOf,
  listQuery,
  notFound,
  queryFilter,
  oneOf,
  optional,
  text,
  z,
} from '../schema/fields.ts';
import { ApiKeyDeleted, ApiKeySchema, IssuedApiKeySchema } from '../schema/resources.ts';
import { schemaRoutes } from '../schema/route.ts';

/** Secret keys of the caller's organization and environment. The secret is shown only when made. */
export function apiKeyRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1/api-keys' });
  const keys = deps.readStore.collection<ApiKeyDoc>(COLLECTIONS.apiKeys);
  const usage = createApiKeyUsage(deps.readStore, deps.clock);
  /** Keys as the API shows them, each with when it last authenticated a request. */
  const withUse = async <T extends { id: string }>(shown: T[]) => {
    const lastUsed = await usage.lastUsed(shown.map((key) => key.id));
    return shown.map((key) => ({ ...key, lastUsedAt: lastUsed.get(key.id) ?? null }));
  };
  const presented = async (doc: ApiKeyDoc) => (await withUse([publicApiKey(doc)]))[0]!;
  const load = async (ctx: ApiContext) => {
    const doc = await keys.get(ctx.params.id!);
    if (!ownedBy(ctx, doc) || doc.deleted) throw new NotFoundError('api key', ctx.params.id!);
    return doc;
  };

  const api = schemaRoutes(router, { tag: 'API keys', auth: 'secretKey' });
  const params = idParams('API key');

  api.route(
    {
      method: 'get',
      path: '/',
      summary: "List the organization's secret keys",
      description: 'Keys of the calling key’s environment; secrets are never shown again, only `maskedKey`.',
      query: listQuery({ ids: queryFilter('Comma-separated key ids') }),
      response: listOf(ApiKeySchema),
      errors: [invalidFields()],
    },
    async (ctx) => {
      const page = await listPage(ctx, keys, {
        base: { deleted: false },
        filters: { ids: { field: 'id', kind: 'csv' } },
        present: publicApiKey,
      });
      return { ...page, data: await withUse(page.data) };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/:id',
      summary: 'Read a secret key',
      params,
      response: ApiKeySchema,
      errors: [notFound('API key')],
    },
    async (ctx) => presented(await load(ctx)),
  );

  api.route(
    {
      method: 'post',
      path: '/',
      summary: 'Create a secret key',
      description: 'The secret is in this answer only: Weir keeps its hash.',
      body: bodyObject({
        name: optional(text({ min: 1, max: 100 })).openapi({ example: 'shop backend' }),
        scope: optional(oneOf(API_KEY_SCOPES)).openapi({
          description:
            '`full` (default): everything; `read`: GET requests only; `audit`: reading plus `/api/v1/audit/*`',
          example: 'read',
        }),
      }),
      bodyOptional: true,
      response: IssuedApiKeySchema,
      errors: [
        invalidFields(),
        {
          status: 409,
          codes: ['api_key_secret_not_delivered', 'idempotency_key_in_use'],
          description: 'A retry of a create whose secret was lost: regenerate or delete that key',
        },
      ],
    },
    async (ctx, { body }) => {
      const { tenant } = ctx.state;
      const name = body.name ?? `${tenant.environment} key`;
      const secret = generateApiKey(tenant.environment);
      const id = idsOf(ctx)();
      await commandFor(deps, ctx, apiKeyAggregate, id, {
        type: 'IssueApiKey',
        id,
        organizationId: tenant.organizationId,
        environment: tenant.environment,
        name,
        scope: body.scope ?? 'full',
        secretHash: hashSecret(secret),
        last4: secret.slice(-4),
      });
      const issued = (await keys.get(id))!;
      if (issued.secretHash !== hashSecret(secret)) {
        // This request run again (same Idempotency-Key and body) after a failure that came after its
        // write: the secret issued then was never shown, and only its hash is kept.
        throw new ConflictError(
          `this request already issued API key ${id}, whose secret was never shown and is not kept: regenerate it with POST /api/v1/api-keys/${id}/regenerate, or delete it`,
          'api_key_secret_not_delivered',
        );
      }
      return { ...(await presented(issued)), secretKey: secret };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/:id/regenerate',
      summary: "Replace a secret key's secret",
      description: 'The old secret stops working at once; the new one is in this answer only.',
      params,
      response: IssuedApiKeySchema,
      errors: [notFound('API key')],
    },
    async (ctx) => {
      const key = await load(ctx);
      const secret = generateApiKey(key.environment);
      await commandFor(deps, ctx, apiKeyAggregate, key.id, {
        type: 'RegenerateApiKey',
        secretHash: hashSecret(secret),
        last4: secret.slice(-4),
      });
      return { ...(await presented((await keys.get(key.id))!)), secretKey: secret };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/:id',
      summary: 'Delete a secret key',
      description: 'Deleting the key that makes the request needs `?force=true`.',
      params,
      query: z.looseObject({
        force: z.string().optional().openapi({ description: '`true` to delete the key making the request' }),
      }),
      response: ApiKeyDeleted,
      errors: [
        { status: 400, codes: ['parameter_invalid'], description: 'The key making the request, without force' },
        notFound('API key'),
      ],
    },
    async (ctx, { query }) => {
      const key = await load(ctx);
      if (key.id === ctx.state.tenant.keyId && query.force !== 'true') {
        throw new ValidationError('id', 'this is the key making the request; pass ?force=true to delete it anyway');
      }
      await commandFor(deps, ctx, apiKeyAggregate, key.id, { type: 'DeleteApiKey' });
      return { statusCode: 200 as const, message: `API key ${key.id} deleted`, success: true as const };
    },
  );

  return router;
}
