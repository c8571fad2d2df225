import Koa from 'koa';
import type Router from '@koa/router';
import { compose } from './compose.ts';
import { dispatchByResource } from './resource-dispatch.ts';
import type { CreateCheckoutSession } from '../actors/create-checkout-session.ts';
import type { ApiDeps, ApiState } from './api-context.ts';
import { idempotencyMiddleware } from './idempotency.ts';
import { authMiddleware, errorMiddleware, jsonBodyMiddleware } from './middleware.ts';
import { adminRoutes } from './routes/admin.ts';
import { faucetRoutes } from './routes/faucet.ts';
import type { DevnetInfo } from '../chain-ingest/evm/devnet/devnet-info.ts';
import { apiKeyRoutes } from './routes/api-keys.ts';
import { catalogRoutes } from './routes/catalog.ts';
import { couponRoutes } from './routes/coupons.ts';
import { hostedPaymentLinkRoutes } from './routes/hosted-payment-link.ts';
import { paymentLinkRoutes } from './routes/payment-links.ts';
import { subscriptionRoutes } from './routes/subscriptions.ts';
import { hostedInvoiceRoutes } from './routes/hosted-invoice.ts';
import { invoiceRoutes } from './routes/invoices.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { Health } from '../app/health.ts';
import { customerRoutes } from './routes/customers.ts';
import { chainRoutes } from './routes/chains.ts';
import { checkoutSessionRoutes } from './routes/checkout-sessions.ts';
import { hostedCheckoutRoutes } from './routes/hosted-checkout.ts';
import { organizationRoutes } from './routes/organization.ts';
import { webhookEndpointRoutes } from './routes/webhook-endpoints.ts';

/**
 * `GET /health`, for load balancers and operators: 200 while Weir is `ok` or `degraded` (it still
 * answers correctly; something it does waits), 503 while `failing`. No key needed, so it shows no
 * error text, endpoint or tenant data.
 */
async function healthRoute(ctx: Koa.Context, health: Health): Promise<void> {
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
    // The error middleware writes the body, as for any route's 405.
    ctx.status = 405;
    ctx.set('Allow', 'GET, HEAD');
    return;
  }
  const report = await health.report();
  ctx.set('Cache-Control', 'no-store');
  ctx.status = report.status === 'failing' ? 503 : 200;
  ctx.body = report;
}

export type HttpDeps = ApiDeps & {
  createCheckoutSession: CreateCheckoutSession;
  mailer: Mailer;
  adminToken?: string;
  devnet?: DevnetInfo | null;
};

/**
 * Every router Weir serves, by the area it is mounted under (`/health` is the one route outside
 * them). `createApiApp` mounts exactly these, and the hostile suite reads its route list from them,
 * so a new route cannot escape either.
 */
export function httpRouters(deps: HttpDeps) {
  return {
    /** `/api/v1/*`, in the order they are tried. */
    api: [
      checkoutSessionRoutes(deps),
      organizationRoutes(deps),
      apiKeyRoutes(deps),
      webhookEndpointRoutes(deps),
      catalogRoutes(deps),
      customerRoutes(deps),
      couponRoutes(deps),
      paymentLinkRoutes(deps),
      invoiceRoutes(deps),
      subscriptionRoutes(deps),
      chainRoutes(deps),
      faucetRoutes({ devnet: deps.devnet ?? null }),
    ],
    checkout: hostedCheckoutRoutes(deps),
    invoices: hostedInvoiceRoutes(deps),
    pay: hostedPaymentLinkRoutes(deps),
    /** Absent when no admin token is configured. */
    admin: deps.adminToken ? adminRoutes({ ...deps, adminToken: deps.adminToken }) : null,
  };
}

/** The HTTP face of Weir: public hosted pages, and the authenticated `/api/v1`. */
export function createApiApp(deps: HttpDeps & { health: Health }): Koa<ApiState> {
  const app = new Koa<ApiState>();
  app.proxy = process.env.WEIR_TRUST_PROXY === '1';
  app.silent = true;
  app.use(errorMiddleware());
  const auth = authMiddleware(deps.readStore);
  const idempotency = idempotencyMiddleware(deps);
  const jsonBody = jsonBodyMiddleware();
  const mounted = (...routers: Router<ApiState>[]): Koa.Middleware<ApiState>[] =>
    routers.flatMap((r) => [r.routes(), r.allowedMethods()] as unknown as Koa.Middleware<ApiState>[]);

  const routers = httpRouters(deps);
  // Under /api the key is checked before the body is read, so a request without a valid key is a
  // 401 whatever its body; then the body, then Idempotency-Key (which needs both).
  const api = compose<ApiState>([auth, jsonBody, idempotency, dispatchByResource(routers.api)]);
  const hosted = compose<ApiState>([jsonBody, ...mounted(routers.checkout)]);
  const hostedInvoices = compose<ApiState>([jsonBody, ...mounted(routers.invoices)]);
  const paymentLinkPages = compose<ApiState>(mounted(routers.pay));
  const admin = routers.admin ? compose<ApiState>([jsonBody, ...mounted(routers.admin)]) : null;

  // One dispatch by path prefix, so a request only meets the middleware of its own area.
  app.use((ctx, next) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    if (ctx.path.startsWith('/api/')) return api(ctx, next);
    if (ctx.path.startsWith('/checkout/')) return hosted(ctx, next);
    if (ctx.path.startsWith('/invoices/')) return hostedInvoices(ctx, next);
    if (ctx.path.startsWith('/pay/')) return paymentLinkPages(ctx, next);
    if (admin && ctx.path.startsWith('/admin/')) return admin(ctx, next);
    if (ctx.path === '/health') return healthRoute(ctx, deps.health);
    return next();
  });
  return app;
}
