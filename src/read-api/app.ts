import Koa from 'koa';
import type Router from '@koa/router';
import { compose } from './compose.ts';
import { allowedMethods, bodyWhenRouted, dispatchByResource, routedBy, routedByResource } from './resource-dispatch.ts';
import type { CreateCheckoutSession } from '../actors/create-checkout-session.ts';
import type { ApiDeps, ApiState } from './api-context.ts';
import { idempotencyMiddleware, keylessPost } from './idempotency.ts';
import {
  apiKeyAuthentication,
  errorMiddleware,
  jsonBodyMiddleware,
  requestLogMiddleware,
  unexpectedErrorLog,
} from './middleware.ts';
import type { Logger } from '../shared/logger.ts';
import { createRateLimiting, DEFAULT_RATE_LIMITS, type RateLimits } from './rate-limits.ts';
import { type ApiBridge, createApiBridge } from './api-bridge.ts';
import { bodyLimit, MAX_BODY_BYTES, MAX_PUBLIC_BODY_BYTES } from './request-body.ts';
import { adminAuthentication, adminRoutes } from './routes/admin.ts';
import { faucetRoutes, localSolanaOffer } from './routes/faucet.ts';
import type { DevnetInfo } from '../chain-ingest/evm/devnet/devnet-info.ts';
import { apiKeyRoutes } from './routes/api-keys.ts';
import { createApiKeyUsage } from './api-key-usage.ts';
import { catalogRoutes } from './routes/catalog.ts';
import { taxRateRoutes } from './routes/tax-rates.ts';
import { couponRoutes } from './routes/coupons.ts';
import { hostedPaymentLinkRoutes, paymentLinkErrorPages } from './routes/hosted-payment-link.ts';
import { paymentLinkRoutes } from './routes/payment-links.ts';
import { subscriptionRoutes } from './routes/subscriptions.ts';
import { hostedInvoiceRoutes, invoiceErrorPages } from './routes/hosted-invoice.ts';
import { hostedAssetRoutes } from '../hosted/assets.ts';
import { createBrandLogoStore } from './brand-logo.ts';
import { hostedPageHeaders } from '../hosted/headers.ts';
import { invoiceRoutes } from './routes/invoices.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { Health } from '../app/health.ts';
import { customerRoutes } from './routes/customers.ts';
import { teamRoutes } from './routes/team.ts';
import { chainRoutes } from './routes/chains.ts';
import { checkoutSessionRoutes } from './routes/checkout-sessions.ts';
import { checkoutErrorPages, hostedCheckoutRoutes } from './routes/hosted-checkout.ts';
import { hostedTestWalletRoutes } from './routes/hosted-test-wallet.ts';
import { hostedSolanaWalletRoutes } from './routes/hosted-solana-wallet.ts';
import { organizationRoutes } from './routes/organization.ts';
import { webhookEndpointRoutes } from './routes/webhook-endpoints.ts';
import { paymentIntentRoutes } from './routes/payment-intents.ts';
import { transactionRoutes } from './routes/transactions.ts';
import { analyticsRoutes, reportRoutes } from './routes/reports.ts';
import { auditRoutes, eventRoutes } from './routes/audit.ts';
import { scopeGuard } from './scopes.ts';
import { apiDocsRoutes, isDocsPath, type OpenApiDocuments } from './routes/api-docs.ts';
import type { MountedAreas } from './schema/openapi-document.ts';
import { httpMetricsMiddleware, type MetricsEndpoint, metricsRoute } from './http-metrics.ts';
import { noMetrics, type Metrics } from '../shared/metrics.ts';

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
  /** `/dashboard/*` (src/dashboard/app.tsx), given the API in process; absent: no dashboard (tests of the API alone). */
  dashboard?: (api: ApiBridge) => Koa.Middleware;
  createCheckoutSession: CreateCheckoutSession;
  mailer: Mailer;
  adminToken?: string;
  devnet?: DevnetInfo | null;
  /** The local Tron's anvil and accounts (0x form, as it runs them): its faucet and test wallet. */
  tronDevnet?: DevnetInfo | null;
  /** The operator's public URL (`WEIR_PUBLIC_URL`), the document's server; unset: `/`, wherever it was fetched. */
  documentServerUrl?: string;
  /** OpenAPI documents other Weirs of this process built (tests start hundreds): see `routeTableKey`. */
  openApiDocuments?: OpenApiDocuments;
};

/** The checkout page's own path (`/checkout/{id}`): the page a browser opens, and where its forms post. */
const CHECKOUT_PAGE = /^\/checkout\/[^/]+\/?$/;

/**
 * Every router Weir serves, by the area it is mounted under (`/health` is the one route outside
 * them). `createApiApp` mounts exactly these, and the hostile suite reads its route list from them,
 * so a new route cannot escape either.
 */
export function httpRouters(deps: HttpDeps & { logger?: Logger }) {
  const areas = {
    /** `/api/v1/*`, in the order they are tried. */
    api: [
      checkoutSessionRoutes(deps),
      organizationRoutes(deps),
      apiKeyRoutes(deps),
      webhookEndpointRoutes(deps),
      catalogRoutes(deps),
      customerRoutes(deps),
      couponRoutes(deps),
      taxRateRoutes(deps),
      paymentLinkRoutes(deps),
      invoiceRoutes(deps),
      subscriptionRoutes(deps),
      chainRoutes(deps),
      transactionRoutes(deps),
      reportRoutes(deps),
      analyticsRoutes(deps),
      paymentIntentRoutes(deps),
      teamRoutes(deps),
      auditRoutes(deps),
      eventRoutes(deps),
      faucetRoutes({
        devnet: deps.devnet ?? null,
        tronDevnet: deps.tronDevnet ?? null,
        localSolana: localSolanaOffer(deps.rail),
      }),
    ],
    /** The hosted checkout page, and its test wallet (test sessions on the local devnet only). */
    checkout: [hostedCheckoutRoutes(deps), hostedTestWalletRoutes(deps), hostedSolanaWalletRoutes(deps)],
    invoices: hostedInvoiceRoutes(deps),
    pay: hostedPaymentLinkRoutes(deps),
    assets: hostedAssetRoutes(),
    /** Absent when no admin token is configured. */
    admin: deps.adminToken ? adminRoutes(deps) : null,
  };
  /** `/api/v1/openapi.json` (every route above, and its own) and the `/docs` page: no key needed. */
  const docs = apiDocsRoutes(() => ({ ...areas, docs }) as unknown as MountedAreas, {
    ...(deps.documentServerUrl === undefined ? {} : { serverUrl: deps.documentServerUrl }),
    ...(deps.openApiDocuments === undefined ? {} : { documents: deps.openApiDocuments }),
  });
  return { ...areas, docs };
}

/** The HTTP face of Weir: public hosted pages, and the authenticated `/api/v1`. */
export function createApiApp(
  deps: HttpDeps & {
    health: Health;
    /** Default `DEFAULT_RATE_LIMITS`. */
    rateLimits?: RateLimits;
    /** The client address is the one a proxy in front added to `X-Forwarded-For` (`WEIR_TRUST_PROXY`). */
    trustProxy?: boolean;
    /** Where each request's line and unexpected errors go; unset: no request lines, errors to stderr. */
    logger?: Logger;
    /** Where request counts and latencies go; unset: nowhere. */
    metrics?: Metrics;
    /** `GET /metrics`; unset: no such route (a 404). */
    metricsEndpoint?: MetricsEndpoint;
    /** A span per request (http-tracing.ts, when tracing is on); unset: no tracing. */
    requestTracing?: Koa.Middleware<ApiState>;
  },
): Koa<ApiState> {
  const app = new Koa<ApiState>();
  app.proxy = deps.trustProxy ?? false;
  // The last address of X-Forwarded-For, the one the proxy in front saw: those before it are the client's to write.
  app.maxIpsCount = 1;
  app.silent = true;
  if (deps.requestTracing) app.use(deps.requestTracing);
  if (deps.metrics && deps.metrics !== noMetrics) app.use(httpMetricsMiddleware(deps.metrics));
  if (deps.logger) app.use(requestLogMiddleware(deps.logger));
  app.use(errorMiddleware(deps.logger));
  const limits = createRateLimiting({ clock: deps.clock, limits: deps.rateLimits ?? DEFAULT_RATE_LIMITS });
  const authenticateKey = apiKeyAuthentication(deps.readStore, async () => {
    const head = await deps.eventStore.headPosition();
    // Bounded: an unknown key is still a 401, after at most this wait for the read models.
    if (head !== null) await deps.projections.waitFor(head, 2_000).catch(() => {});
  });
  const keyUsage = createApiKeyUsage(deps.readStore, deps.clock);
  const jsonBody = jsonBodyMiddleware(MAX_BODY_BYTES);
  const publicJsonBody = jsonBodyMiddleware(MAX_PUBLIC_BODY_BYTES);
  const mounted = (router: Router<ApiState>): Koa.Middleware<ApiState>[] => [
    router.routes() as unknown as Koa.Middleware<ApiState>,
    allowedMethods<ApiState>(),
  ];
  const routers = httpRouters(deps);
  const idempotency = idempotencyMiddleware({ ...deps, keyless: keylessPost(routers.api) });
  const dashboard = deps.dashboard?.(createApiBridge(routers.api));

  // Under /api a body whose length says too much is refused unread; then the key is checked
  // before the body is read, so a request without a valid key is a 401 whatever its body; then
  // the key's rate limit, the body, and Idempotency-Key (which needs both).
  const api = compose<ApiState>([
    bodyLimit(MAX_BODY_BYTES),
    limits.authentication(async (ctx) => {
      ctx.state.tenant = { ...(await authenticateKey(ctx)), clientAddress: ctx.ip };
      await keyUsage.used(ctx.state.tenant.keyId);
    }),
    limits.perApiKey,
    scopeGuard(routers.api),
    // A method the path does not take is a 405 whatever the body: nothing read, no key claimed.
    bodyWhenRouted(routedByResource(routers.api), compose<ApiState>([jsonBody, idempotency])),
    dispatchByResource(routers.api),
  ]);
  const pageHeaders = hostedPageHeaders<ApiState>();
  // The public pages: their security headers, counted per client address, small bodies only, read
  // only for a route that takes the method (the rest are a 405 or 404 page whatever was sent).
  const publicPages = (body: Koa.Middleware<ApiState>[], ...routers: Router<ApiState>[]) =>
    compose<ApiState>([
      pageHeaders,
      limits.hosted,
      bodyLimit(MAX_PUBLIC_BODY_BYTES),
      ...body.map((read) => bodyWhenRouted(routedBy(routers), read)),
      ...routers.flatMap(mounted),
    ]);
  // A browser's pages answer their refusals (the limits' too) and unexpected errors as pages, not the
  // API's JSON (hosted-error-pages.ts); the page scripts' JSON routes keep JSON answers.
  const logUnexpected = unexpectedErrorLog(deps.logger);
  const hosted = publicPages([publicJsonBody], ...routers.checkout);
  // The script's routes keep JSON; a path under /checkout/ no route has, where a browser lands, is a page.
  const checkoutScripts = compose<ApiState>([checkoutErrorPages(deps.readStore, logUnexpected, true), hosted]);
  const checkoutPages = checkoutErrorPages(deps.readStore, logUnexpected);
  const checkoutPage = compose<ApiState>([checkoutPages, hosted]);
  // The checkout page's asset buttons without its script: a form that its route reads itself.
  const checkoutForm = compose<ApiState>([checkoutPages, publicPages([], ...routers.checkout)]);
  const hostedInvoices = compose<ApiState>([
    invoiceErrorPages(deps.readStore, logUnexpected),
    publicPages([publicJsonBody], routers.invoices),
  ]);
  // The payment link's form reads its own body (a form, not JSON).
  const paymentLinkPages = compose<ApiState>([
    paymentLinkErrorPages(deps.readStore, logUnexpected),
    publicPages([], routers.pay),
  ]);
  const hostedAssets = compose<ApiState>(mounted(routers.assets));
  const logos = createBrandLogoStore(deps);
  // Uploaded brand logos live beside the bundled assets, under /assets/logos/.
  const assets: Koa.Middleware<ApiState> = async (ctx, next) => {
    if (ctx.path.startsWith('/assets/logos/') && (await logos.serve(ctx))) return;
    return hostedAssets(ctx, next);
  };
  // Like /health, not counted against a client's rate limits: the answers are built once and kept.
  const docs = compose<ApiState>(mounted(routers.docs));
  const admin =
    deps.adminToken && routers.admin
      ? compose<ApiState>([
          bodyLimit(MAX_BODY_BYTES),
          limits.authentication(adminAuthentication(deps.adminToken)),
          jsonBody,
          ...mounted(routers.admin),
        ])
      : null;
  const metrics = deps.metricsEndpoint
    ? metricsRoute(
        deps.metricsEndpoint,
        deps.adminToken ? limits.authentication(adminAuthentication(deps.adminToken)) : null,
      )
    : null;

  // One dispatch by path prefix, so a request only meets the middleware of its own area.
  app.use((ctx, next) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    if (isDocsPath(ctx.path)) return docs(ctx, next);
    if (ctx.path.startsWith('/api/')) return api(ctx, next);
    if (ctx.path.startsWith('/checkout/')) {
      if (!CHECKOUT_PAGE.test(ctx.path)) return checkoutScripts(ctx, next);
      return (ctx.method === 'POST' ? checkoutForm : checkoutPage)(ctx, next);
    }
    if (ctx.path.startsWith('/invoices/')) return hostedInvoices(ctx, next);
    if (ctx.path.startsWith('/pay/')) return paymentLinkPages(ctx, next);
    if (ctx.path.startsWith('/assets/') || ctx.path === '/favicon.ico') return assets(ctx, next);
    if (admin && ctx.path.startsWith('/admin/')) return admin(ctx, next);
    if (ctx.path === '/health') return healthRoute(ctx, deps.health);
    if (metrics && ctx.path === '/metrics') return metrics(ctx, next);
    if (dashboard && (ctx.path === '/dashboard' || ctx.path.startsWith('/dashboard/'))) return dashboard(ctx, next);
    // The address the start-up log names: a person opening it lands on the dashboard (or the API docs without one).
    if (ctx.path === '/' && (ctx.method === 'GET' || ctx.method === 'HEAD')) {
      ctx.redirect(dashboard ? '/dashboard' : '/docs');
      return;
    }
    return next();
  });
  return app;
}
