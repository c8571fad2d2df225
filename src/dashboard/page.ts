import type Router from '@koa/router';
import type { DashboardContext, DashboardDeps, DashboardState } from './context.ts';
import { requirePermission, type Permission } from './auth/roles.ts';
import type { ScreenId } from './screens.ts';

export type PageHandler = (ctx: DashboardContext) => Promise<void> | void;

/**
 * How a page module declares its routes. Every route names the permission it needs (checked
 * before the handler runs, a 403 page otherwise); a signed-in user, the CSRF check of every POST
 * and the tenant are already there (`ctx.state`).
 */
export type PageRoutes = {
  get(path: string, permission: Permission, handler: PageHandler): void;
  post(path: string, permission: Permission, handler: PageHandler): void;
};

/**
 * A dashboard screen as a module: the nav item it adds (if any) and its routes. In
 * `src/dashboard/pages/invoices.tsx`:
 *
 *     export const page = definePage({
 *       screen: 'invoices',
 *       routes(routes, deps) {
 *         routes.get('/dashboard/invoices', 'read', async (ctx) =>
 *           sendHtml(ctx, <AppLayout ctx={ctx} title="Invoices" screen="invoices">…</AppLayout>));
 *         routes.post('/dashboard/invoices/:id/void', 'manage', async (ctx) => {
 *           // Through the API's own route (its rules, its 4xx): see api.ts.
 *           const answer = await apiFor(ctx, deps)('POST', `/api/v1/invoices/${ctx.params.id}/void`);
 *           redirectTo(ctx, `/dashboard/invoices/${ctx.params.id}`);
 *         });
 *       },
 *     });
 */
export type DashboardPage = {
  /** The nav item this module brings (see screens.ts); leave out for a module that only adds routes. */
  screen?: ScreenId;
  routes(routes: PageRoutes, deps: DashboardDeps): void;
};

/** Identity, for the types: `export const page = definePage({...})`. */
export const definePage = (page: DashboardPage): DashboardPage => page;

/** PageRoutes over a router: each route checks its permission first. */
export function pageRoutes(router: Router<DashboardState>): PageRoutes {
  const guarded =
    (permission: Permission, handler: PageHandler) =>
    (ctx: DashboardContext): Promise<void> | void => {
      requirePermission(ctx.state.user.role, permission);
      return handler(ctx);
    };
  return {
    get: (path, permission, handler) => {
      router.get(path, guarded(permission, handler));
    },
    post: (path, permission, handler) => {
      router.post(path, guarded(permission, handler));
    },
  };
}
