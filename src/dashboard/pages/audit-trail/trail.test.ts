import test from 'ava';
import { TEST_NETWORK, createTestRail } from '../../../chain-ingest/test-rail.ts';
import { auditFilter, nativeCoinsOf, parseAuditQuery } from './trail.ts';
import { UTC } from '../../../shared/time-zone.ts';

const TENANT = { organizationId: 'org-1', environment: 'live' as const };

test("the trail's filters: the tenant's environment, people and keys only unless asked, actor, record, type and dates", (t) => {
  const { query, errors } = parseAuditQuery({
    actor: 'api_key:k1',
    recordType: 'customer',
    recordId: 'c1',
    type: 'CustomerUpdated',
    from: '2026-05-01',
    to: '2026-05-01',
  });
  t.deepEqual(errors, {});
  t.deepEqual(auditFilter(TENANT, query, {}, UTC), {
    organizationId: 'org-1',
    environments: 'live',
    system: false,
    actor: 'api_key:k1',
    recordType: 'customer',
    recordId: 'c1',
    type: 'CustomerUpdated',
    occurredAt: { $gte: '2026-05-01T00:00:00.000Z', $lt: '2026-05-02T00:00:00.000Z' },
  });
  t.deepEqual(auditFilter(TENANT, parseAuditQuery({ system: 'show' }).query, {}, UTC), {
    organizationId: 'org-1',
    environments: 'live',
  });
  t.like(auditFilter(TENANT, parseAuditQuery({ system: 'only' }).query, {}, UTC), { system: true });
});

test('a filter that cannot be read is named and left out', (t) => {
  const { query, errors } = parseAuditQuery({ recordType: 'planet', to: 'soon' });
  t.deepEqual(errors, { recordType: 'Pick a record type from the list.', to: 'Enter a date as YYYY-MM-DD.' });
  t.deepEqual(auditFilter(TENANT, query, errors, UTC), {
    organizationId: 'org-1',
    environments: 'live',
    system: false,
  });
});

test("the native coins a sweep's gas is written in: every network the rails offer, by chain id", (t) => {
  t.deepEqual(
    nativeCoinsOf(createTestRail()),
    new Map([[TEST_NETWORK.chainId, { decimals: 18, unit: TEST_NETWORK.nativeCurrency.symbol }]]),
  );
});
