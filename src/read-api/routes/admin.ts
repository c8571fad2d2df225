import Router from '@koa/router';
import type Koa from 'koa';
import type { CommandHandler } from '../../actors/command-handler.ts';
import type { ProjectionRunner } from '../../projections/projection-runner.ts';
import { UnauthorizedError } from '../../shared/errors.ts';
import { createOrganization } from '../../tenancy/create-organization.ts';
import { hashSecret, secretsEqual } from '../../tenancy/secrets.ts';
import type { ApiState } from '../api-context.ts';
import { bodyObject, invalidFields, requiredText, z } from '../schema/fields.ts';
import { schemaRoutes } from '../schema/route.ts';

const CreatedOrganizationSchema = z
  .object({
    organizationId: z.string(),
    name: z.string(),
    testSecretKey: z.string().openapi({ description: 'Shown only in this answer', example: 'sk_test_…' }),
    liveSecretKey: z.string().openapi({ description: 'Shown only in this answer', example: 'sk_live_…' }),
  })
  .openapi('CreatedOrganization');

/**
 * The check of the operator's token (`Authorization: Bearer <WEIR_ADMIN_TOKEN>`), which every
 * `/admin/*` request passes before its route: a 401 otherwise.
 */
export function adminAuthentication(adminToken: string): (ctx: Koa.Context) => void {
  const expected = hashSecret(adminToken);
  return (ctx) => {
    const match = /^Bearer\s+(\S+)$/i.exec(ctx.get('authorization'));
    if (!match || !secretsEqual(hashSecret(match[1]!), expected))
      throw new UnauthorizedError('the admin API needs Authorization: Bearer <WEIR_ADMIN_TOKEN>');
  };
}

/**
 * The operator's API, behind `adminAuthentication`: organizations are created here or with
 * `weir org create`. Absent when no admin token is configured.
 */
export function adminRoutes(deps: { commands: CommandHandler; projections: ProjectionRunner }): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/admin' });
  const api = schemaRoutes(router, { tag: 'Admin', auth: 'admin' });
  api.route(
    {
      method: 'post',
      path: '/organizations',
      summary: 'Create an organization',
      description: 'With a test and a live secret key, shown only in this answer.',
      body: bodyObject({ name: requiredText({ max: 200 }) }).openapi('OrganizationCreate', {
        example: { name: 'Acme Ltd' },
      }),
      response: CreatedOrganizationSchema,
      errors: [invalidFields()],
    },
    async (_ctx, { body }) => {
      const created = await createOrganization(deps.commands, body.name);
      await deps.projections.waitFor(created.position);
      return {
        organizationId: created.organizationId,
        name: created.name,
        testSecretKey: created.keys.test.secretKey,
        liveSecretKey: created.keys.live.secretKey,
      };
    },
  );
  return router;
}
