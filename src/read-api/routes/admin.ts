import Router from '@koa/router';
import type { CommandHandler } from '../../actors/command-handler.ts';
import type { ProjectionRunner } from '../../projections/projection-runner.ts';
import { UnauthorizedError } from '../../shared/errors.ts';
import { asObject, requiredString } from '../../shared/input.ts';
import { createOrganization } from '../../tenancy/create-organization.ts';
import { hashSecret, secretsEqual } from '../../tenancy/secrets.ts';
import type { ApiState } from '../api-context.ts';

/**
 * The operator's API (`Authorization: Bearer <WEIR_ADMIN_TOKEN>`): organizations are created
 * here or with `weir org create`. Absent when no admin token is configured.
 */
export function adminRoutes(deps: {
  adminToken: string;
  commands: CommandHandler;
  projections: ProjectionRunner;
}): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/admin' });
  const expected = hashSecret(deps.adminToken);
  router.use(async (ctx, next) => {
    const match = /^Bearer\s+(\S+)$/i.exec(ctx.get('authorization'));
    if (!match || !secretsEqual(hashSecret(match[1]!), expected))
      throw new UnauthorizedError('the admin API needs Authorization: Bearer <WEIR_ADMIN_TOKEN>');
    await next();
  });
  router.post('/organizations', async (ctx) => {
    const name = requiredString(asObject(ctx.state.body, ''), 'name', '', { max: 200 });
    const created = await createOrganization(deps.commands, name);
    await deps.projections.waitFor(created.position);
    ctx.body = {
      organizationId: created.organizationId,
      name: created.name,
      testSecretKey: created.keys.test.secretKey,
      liveSecretKey: created.keys.live.secretKey,
    };
  });
  return router;
}
