import test from 'ava';
import type { Permission } from './auth/roles.ts';
import type { DashboardDeps } from './context.ts';
import type { PageRoutes } from './page.ts';
import { DASHBOARD_PAGES } from './pages/registry.ts';
import { navOf } from './screens.ts';

test('the nav lists the registered screens only, in the order of the screens table, whatever the registration order', (t) => {
  t.deepEqual(
    navOf(['auditTrail', 'home', 'faucet']).map((item) => [item.label, item.path, item.testOnly]),
    [
      ['Home', '/dashboard', false],
      ['Faucet', '/dashboard/faucet', true],
      ['Audit trail', '/dashboard/audit-trail', false],
    ],
  );
});

test('every module of the pages folder is found: Home is registered', (t) => {
  t.true(DASHBOARD_PAGES.some((page) => page.screen === 'home'));
  t.true(DASHBOARD_PAGES.every((page) => typeof page.routes === 'function'));
});

test("each screen's nav item asks the permission its page's own GET asks, so the nav hides exactly what a role is refused", (t) => {
  const asked = new Map<string, Permission>();
  const routes: PageRoutes = {
    get: (path, permission) => {
      asked.set(path, permission);
    },
    post: () => {},
  };
  // Registration only declares routes; whatever a page takes from its dependencies then is not used here.
  const inert: unknown = new Proxy(() => inert, { get: () => inert, apply: () => inert });
  for (const page of DASHBOARD_PAGES) page.routes(routes, inert as DashboardDeps);
  const nav = navOf(DASHBOARD_PAGES.flatMap((page) => (page.screen ? [page.screen] : [])));
  t.true(nav.length > 10);
  t.deepEqual(
    nav.map((item) => [item.path, item.permission]),
    nav.map((item) => [item.path, asked.get(item.path)]),
  );
  t.deepEqual(
    nav.filter((item) => item.permission !== 'read').map((item) => [item.label, item.permission]),
    [
      ['Developers', 'developers'],
      ['Recovery', 'manage'],
      ['Faucet', 'developers'],
    ],
  );
});
