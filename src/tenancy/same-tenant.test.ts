import test from 'ava';
import { isTenants } from './same-tenant.ts';

const tenant = { organizationId: 'org-a', environment: 'test' };

test('a record is its tenant’s only in the same organization and environment', (t) => {
  t.true(isTenants({ ...tenant, id: 'r' }, tenant));
  t.false(isTenants({ organizationId: 'org-a', environment: 'live' }, tenant));
  t.false(isTenants({ organizationId: 'org-b', environment: 'test' }, tenant));
  t.false(isTenants(null, tenant));
  t.false(isTenants(undefined, tenant));
});
