import type Router from '@koa/router';
import { cardProcessorAggregate, type CardProcessor } from '../../actors/card-processor.ts';
import { organizationRecordId } from '../../actors/organization.ts';
import { ValidationError } from '../../shared/errors.ts';
import type { ApiContext, ApiDeps, ApiState } from '../api-context.ts';
import { commandFor } from '../command.ts';
import { CardProcessorSchema, CardProcessorUpdate, PUBLISHABLE_KEY, SECRET_KEY } from '../schema/card-processor.ts';
import { invalidFields } from '../schema/fields.ts';
import { MessageSchema } from '../schema/organization.ts';
import { schemaRoutes } from '../schema/route.ts';

/**
 * `/organization/card-processor` (Weir's: the reference sets these keys only in its dashboard):
 * the card processor account's keys, for card payments (spec, item 9). The secret key is sealed
 * with the master key as webhook secrets are and never answered again, only its last four.
 * Weir runs no card processor integration yet, so the keys are kept for when it does.
 */
export function mountCardProcessor(router: Router<ApiState>, deps: ApiDeps): void {
  const recordId = (ctx: ApiContext) =>
    organizationRecordId(ctx.state.tenant.organizationId, ctx.state.tenant.environment);
  const load = async (ctx: ApiContext) =>
    (await deps.commands.load(cardProcessorAggregate, recordId(ctx), ctx.state.tenant)).state;
  const present = (keys: CardProcessor | null) => ({
    object: 'card_processor' as const,
    connected: keys !== null,
    provider: keys?.provider ?? null,
    publishableKey: keys?.publishableKey ?? null,
    secretKeyLast4: keys?.secretKeyLast4 ?? null,
    cardPaymentsAvailable: false as const,
    connectedAt: keys?.connectedAt ?? null,
    updatedAt: keys?.updatedAt ?? null,
  });

  const api = schemaRoutes(router, { tag: 'Card processor', auth: 'secretKey' });
  api.route(
    {
      method: 'get',
      path: '/card-processor',
      summary: 'Read the card processor keys',
      description: 'The publishable key and the last four characters of the secret key; never the secret key.',
      response: CardProcessorSchema,
    },
    async (ctx) => present(await load(ctx)),
  );

  api.route(
    {
      method: 'put',
      path: '/card-processor',
      summary: 'Set the card processor keys',
      description:
        'Replaces the keys. Test keys belong to the test environment and live keys to live. The secret key is stored sealed and never answered again.',
      body: CardProcessorUpdate,
      response: CardProcessorSchema,
      errors: [invalidFields()],
    },
    async (ctx, { body }) => {
      const { environment } = ctx.state.tenant;
      // A live key in the test environment (or the reverse) would charge real cards from test sessions.
      for (const [field, pattern] of [
        ['publishableKey', PUBLISHABLE_KEY],
        ['secretKey', SECRET_KEY],
      ] as const)
        if (pattern.exec(body[field])?.[1] !== environment)
          throw new ValidationError(field, `must be a ${environment} key in the ${environment} environment`);
      await commandFor(deps, ctx, cardProcessorAggregate, recordId(ctx), {
        type: 'SetCardProcessorKeys',
        provider: body.provider ?? 'stripe',
        publishableKey: body.publishableKey,
        sealedSecretKey: deps.secretBox.seal(body.secretKey),
        secretKeyLast4: body.secretKey.slice(-4),
      });
      return present(await load(ctx));
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/card-processor',
      summary: 'Remove the card processor keys',
      response: MessageSchema,
      errors: [{ status: 400, codes: ['resource_missing'], description: 'No card processor is connected' }],
    },
    async (ctx) => {
      await commandFor(deps, ctx, cardProcessorAggregate, recordId(ctx), { type: 'RemoveCardProcessorKeys' });
      return { message: 'card processor keys removed', statusCode: 200 as const };
    },
  );
}
