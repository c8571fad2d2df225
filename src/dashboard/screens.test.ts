import test from 'ava';
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
