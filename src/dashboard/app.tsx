import { randomBytes } from 'node:crypto';
import Router from '@koa/router';
import type Koa from 'koa';
import { organizationRecordId } from '../actors/organization.ts';
import { COLLECTIONS, type OrganizationDoc } from '../projections/collections.ts';
import type { UserDoc } from '../projections/team.projection.ts';
import { clientAddressKey } from '../read-api/rate-limits.ts';
import { ForbiddenError, NotFoundError, UnauthorizedError, WeirError } from '../shared/errors.ts';
import { serveDashboardAsset } from './assets.ts';
import { inviteRoutes } from './auth/invite.tsx';
import { sessionRoutes, signIn, signInRoutes } from './auth/sign-in.tsx';
import { TWO_FACTOR_SIGN_IN_PATH, twoFactorSignInRoutes } from './auth/two-factor-sign-in.tsx';
import { mustEnrol, openWhileEnrolling, SECURITY_PATH } from './auth/two-factor.ts';
import type { DashboardContext, DashboardDeps, DashboardState } from './context.ts';
import { streamEvents } from './events.ts';
import { COOKIES, environmentOf, isHtmx, isSecure, readForm, sendHtml, setCookie } from './http.ts';
import { pageRoutes, type DashboardPage } from './page.ts';
import { DASHBOARD_PAGES } from './pages/registry.ts';
import { navOf } from './screens.ts';
import { ErrorPage } from './ui/error-page.tsx';
import { requestTimeZone } from './ui/time-zone-field.tsx';

/**
 * The dashboard's security headers: scripts and styles from Weir only (no inline script or style,
 * no eval), forms posting to Weir only, no framing, no plugins; like the hosted pages'.
 */
export const DASHBOARD_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: *; connect-src 'self'; form-action 'self'; base-uri 'none'; object-src 'none'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'same-origin',
} as const;

const SAFE_METHODS = new Set(['GET', 'HEAD']);

/** The routes anyone may reach (sign-in and first run, invite links); every other dashboard route needs a session. */
const PUBLIC_PATHS = new Set(['/dashboard/login', TWO_FACTOR_SIGN_IN_PATH, '/dashboard/setup']);
const isPublic = (path: string) => PUBLIC_PATHS.has(path) || path.startsWith('/dashboard/invite/');

/**
 * `/dashboard/*`: sign-in, the first-run page, live updates and every registered screen
 * (pages/registry.ts). In order: the session (cookie), the CSRF check of every state-changing
 * request, the public pages, then sign-in required (a GET is sent to the login page), the tenant
 * (organization and the environment switch), and the pages, each checking its permission. Errors
 * are pages (or, for htmx, the status with the message), never the API's JSON.
 */
export function createDashboard(deps: DashboardDeps, extraPages: readonly DashboardPage[] = []): Koa.Middleware {
  const pages = [...DASHBOARD_PAGES, ...extraPages];
  const nav = navOf(pages.flatMap((page) => (page.screen ? [page.screen] : [])));
  const publicRouter = signInRoutes(deps);
  const startSession = (ctx: DashboardContext, user: UserDoc) => signIn(ctx, deps, user);
  publicRouter.use(twoFactorSignInRoutes(deps, startSession).routes(), inviteRoutes(deps, startSession).routes());
  const signedIn = new Router<DashboardState>();
  signedIn.get('/dashboard/events', (ctx) => streamEvents(ctx, deps.events, ctx.state.tenant));
  for (const page of pages) page.routes(pageRoutes(signedIn), deps);
  const publicRoutes = publicRouter.routes();
  const sessionRoutesMiddleware = sessionRoutes(deps).routes();
  const pageRoutesMiddleware = signedIn.routes();
  const organizations = deps.readStore.collection<OrganizationDoc>(COLLECTIONS.organizations);

  async function area(ctx: DashboardContext, next: Koa.Next): Promise<void> {
    const state = ctx.state;
    state.clientAddress = clientAddressKey(ctx.ip);
    state.nav = nav;
    Object.assign(
      state,
      SAFE_METHODS.has(ctx.method) ? { form: new URLSearchParams(), files: [] } : await readForm(ctx),
    );
    const signed = await deps.sessions.resolve(ctx.cookies.get(COOKIES.session));
    let binding: string;
    if (signed) {
      state.user = signed.user;
      state.session = signed.session;
      binding = `session:${signed.session.id}`;
    } else {
      let form = ctx.cookies.get(COOKIES.form);
      if (!form || !/^[A-Za-z0-9_-]{43}$/.test(form)) {
        form = randomBytes(32).toString('base64url');
        setCookie(ctx, COOKIES.form, form, { secure: isSecure(ctx, deps.publicUrl) });
      }
      binding = `form:${form}`;
    }
    state.csrfToken = deps.csrf.tokenFor(binding);
    if (!SAFE_METHODS.has(ctx.method)) {
      if (ctx.get('sec-fetch-site') === 'cross-site')
        throw new ForbiddenError('this request came from another site', 'csrf_invalid');
      const given = state.form.get('_csrf') ?? (ctx.get('x-csrf-token') || undefined);
      if (!deps.csrf.verify(binding, given))
        throw new ForbiddenError(
          'this form has expired or did not come from this dashboard: reload the page and try again',
          'csrf_invalid',
        );
    }
    if (isPublic(ctx.path)) {
      await publicRoutes(ctx, async () => {});
      if (ctx.status === 404 && ctx.body === undefined) throw new NotFoundError('page', ctx.path);
      return;
    }
    if (!signed) {
      if (SAFE_METHODS.has(ctx.method) && !isHtmx(ctx) && ctx.path !== '/dashboard/events') {
        ctx.status = 303;
        ctx.redirect(`/dashboard/login?next=${encodeURIComponent(ctx.originalUrl)}`);
        return;
      }
      if (isHtmx(ctx)) ctx.set('HX-Redirect', '/dashboard/login');
      throw new UnauthorizedError('you are not signed in, or your session has ended: sign in again');
    }
    const environment = environmentOf(ctx);
    state.tenant = { organizationId: signed.user.organizationId, environment };
    state.organization = await organizations.get(organizationRecordId(signed.user.organizationId, environment));
    state.timeZone = requestTimeZone(ctx);
    // The organization requires two-factor and this user has none: enrolment before anything else.
    if (!openWhileEnrolling(ctx.path) && (await mustEnrol(deps, signed.user))) {
      if (isHtmx(ctx)) ctx.set('HX-Redirect', SECURITY_PATH);
      if (!SAFE_METHODS.has(ctx.method) || isHtmx(ctx))
        throw new ForbiddenError(
          'your organization requires two-factor sign-in: turn it on first',
          'two_factor_required',
        );
      ctx.status = 303;
      ctx.redirect(SECURITY_PATH);
      return;
    }
    await sessionRoutesMiddleware(ctx, async () => {
      await pageRoutesMiddleware(ctx, next);
    });
    if (ctx.status === 404 && ctx.body === undefined) throw new NotFoundError('page', ctx.path);
  }

  return async (ctx, next) => {
    ctx.set(DASHBOARD_HEADERS);
    if (serveDashboardAsset(ctx)) return;
    const context = ctx as unknown as DashboardContext;
    try {
      await area(context, next);
    } catch (error) {
      if (!(error instanceof WeirError)) throw error;
      ctx.set(error.headers);
      const message =
        error instanceof NotFoundError
          ? 'There is no such page in the dashboard.'
          : `${error.message.charAt(0).toUpperCase()}${error.message.slice(1)}.`;
      if (isHtmx(ctx)) {
        ctx.status = error.statusCode;
        ctx.type = 'text/plain; charset=utf-8';
        ctx.body = message;
        return;
      }
      await sendHtml(ctx, <ErrorPage ctx={context} status={error.statusCode} message={message} />, error.statusCode);
    }
  };
}
