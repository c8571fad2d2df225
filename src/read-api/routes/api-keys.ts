import Router from '@koa/router';
import { apiKeyAggregate } from '../../actors/api-key.ts';
import { COLLECTIONS, type ApiKeyDoc } from '../../projections/collections.ts';
import { publicApiKey } from '../../projections/public-views.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../shared/errors.ts';
import { asObject, optionalString } from '../../shared/input.ts';
import { generateApiKey, hashSecret } from '../../tenancy/secrets.ts';
import { type ApiContext, type ApiDeps, type ApiState, idsOf } from '../api-context.ts';
import { commandFor, ownedBy } from '../command.ts';
import { listPage } from '../pagination.ts';

/** Secret keys of the caller's organization and environment. The secret is shown only when made. */
export function apiKeyRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1/api-keys' });
  const keys = deps.readStore.collection<ApiKeyDoc>(COLLECTIONS.apiKeys);
  const load = async (ctx: ApiContext) => {
    const doc = await keys.get(ctx.params.id!);
    if (!ownedBy(ctx, doc) || doc.deleted) throw new NotFoundError('api key', ctx.params.id!);
    return doc;
  };

  router.get('/', async (ctx) => {
    ctx.body = await listPage(ctx, keys, { base: { deleted: false }, present: publicApiKey });
  });

  router.get('/:id', async (ctx) => {
    ctx.body = publicApiKey(await load(ctx));
  });

  router.post('/', async (ctx) => {
    const body = ctx.state.body === undefined ? {} : asObject(ctx.state.body, '');
    const name = optionalString(body, 'name', '', { min: 1, max: 100 }) ?? `${ctx.state.tenant.environment} key`;
    const { tenant } = ctx.state;
    const secret = generateApiKey(tenant.environment);
    const id = idsOf(ctx)();
    await commandFor(deps, ctx, apiKeyAggregate, id, {
      type: 'IssueApiKey',
      id,
      organizationId: tenant.organizationId,
      environment: tenant.environment,
      name,
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
    ctx.body = { ...publicApiKey(issued), secretKey: secret };
  });

  router.post('/:id/regenerate', async (ctx) => {
    const key = await load(ctx);
    const secret = generateApiKey(key.environment);
    await commandFor(deps, ctx, apiKeyAggregate, key.id, {
      type: 'RegenerateApiKey',
      secretHash: hashSecret(secret),
      last4: secret.slice(-4),
    });
    ctx.body = { ...publicApiKey((await keys.get(key.id))!), secretKey: secret };
  });

  router.delete('/:id', async (ctx) => {
    const key = await load(ctx);
    if (key.id === ctx.state.tenant.keyId && ctx.query.force !== 'true') {
      throw new ValidationError('id', 'this is the key making the request; pass ?force=true to delete it anyway');
    }
    await commandFor(deps, ctx, apiKeyAggregate, key.id, { type: 'DeleteApiKey' });
    ctx.body = { success: true };
  });

  return router;
}
