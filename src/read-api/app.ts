import Koa from 'koa';
import type { CreateCheckoutSession } from '../actors/create-checkout-session.ts';
import type { ApiDeps, ApiState } from './api-context.ts';
import { idempotencyMiddleware } from './idempotency.ts';
import { authMiddleware, errorMiddleware, jsonBodyMiddleware } from './middleware.ts';
import { adminRoutes } from './routes/admin.ts';
import { faucetRoutes } from './routes/faucet.ts';
import type { DevnetInfo } from '../chain-ingest/evm/devnet/devnet-info.ts';
import { apiKeyRoutes } from './routes/api-keys.ts';
import { catalogRoutes } from './routes/catalog.ts';
import { chainRoutes } from './routes/chains.ts';
import { checkoutSessionRoutes } from './routes/checkout-sessions.ts';
import { hostedCheckoutRoutes } from './routes/hosted-checkout.ts';
import { organizationRoutes } from './routes/organization.ts';
import { webhookEndpointRoutes } from './routes/webhook-endpoints.ts';

/** The HTTP face of Weir: public hosted pages, and the authenticated `/api/v1`. */
export function createApiApp(deps: ApiDeps & { createCheckoutSession: CreateCheckoutSession; adminToken?: string; devnet?: DevnetInfo | null }): Koa<ApiState> {
  const app = new Koa<ApiState>();
  app.proxy = process.env.WEIR_TRUST_PROXY === '1';
  app.silent = true;
  app.use(errorMiddleware());
  app.use(async (ctx, next) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    await next();
  });
  // Under /api the key is checked before the body is read, so a request without a valid key is a
  // 401 whatever its body; then the body, then Idempotency-Key (which needs both).
  const auth = authMiddleware(deps.readStore);
  const idempotency = idempotencyMiddleware(deps);
  const jsonBody = jsonBodyMiddleware();
  app.use(async (ctx, next) => {
    if (!ctx.path.startsWith('/api/')) return jsonBody(ctx, next);
    return auth(ctx, () => jsonBody(ctx, () => idempotency(ctx, next)));
  });

  const hosted = hostedCheckoutRoutes(deps);
  app.use(hosted.routes());
  app.use(async (ctx, next) => {
    if (ctx.path === '/health') { ctx.body = { status: 'ok', position: deps.projections.position()?.toString() ?? null }; return; }
    return next();
  });

  if (deps.adminToken) {
    const admin = adminRoutes({ ...deps, adminToken: deps.adminToken });
    app.use(admin.routes());
    app.use(admin.allowedMethods());
  }

  for (const router of [
    checkoutSessionRoutes(deps),
    organizationRoutes(deps),
    apiKeyRoutes(deps),
    webhookEndpointRoutes(deps),
    catalogRoutes(deps),
    chainRoutes(deps),
    faucetRoutes({ devnet: deps.devnet ?? null }),
  ]) {
    app.use(router.routes());
    app.use(router.allowedMethods());
  }
  return app;
}
