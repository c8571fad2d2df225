import test from 'ava';
import type { RecordedEvent } from '../event-store/event-store.ts';
import { actorKindOf, auditEntryOf } from './audit-trail.projection.ts';

const event = (
  streamId: string,
  type: string,
  actor: string,
  extra: Partial<RecordedEvent['metadata']> = {},
): RecordedEvent => ({
  id: 'e1',
  type,
  data: {},
  streamId,
  revision: 2,
  position: 41n,
  metadata: {
    organizationId: 'org-1',
    environment: 'test',
    actor,
    correlationId: 'c',
    occurredAt: '2026-05-01T00:00:00Z',
    ...extra,
  },
});

test('an entry per tenant event: where it is in the log, its record, actor and address', (t) => {
  t.deepEqual(auditEntryOf(event('customer-c1', 'CustomerUpdated', 'api_key:k1', { clientAddress: '10.0.0.7' })), {
    _id: 'e1',
    organizationId: 'org-1',
    environments: ['test'],
    seq: 41,
    streamId: 'customer-c1',
    revision: 2,
    recordType: 'customer',
    recordId: 'c1',
    type: 'CustomerUpdated',
    actor: 'api_key:k1',
    actorKind: 'api_key',
    system: false,
    clientAddress: '10.0.0.7',
    occurredAt: '2026-05-01T00:00:00Z',
  });
  t.like(auditEntryOf(event('checkout_session-s1', 'PaymentDetected', 'system:matcher')), {
    system: true,
    clientAddress: null,
  });
  t.like(auditEntryOf(event('user-u1', 'UserCreated', 'cli')), { environments: ['test', 'live'], system: false });
});

test('bookkeeping streams and session heartbeats are not changes', (t) => {
  t.is(auditEntryOf(event('idempotency-abc', 'IdempotencyKeyClaimed', 'api_key:k1')), null);
  t.is(auditEntryOf(event('dashboard_session-d1', 'DashboardSessionActive', 'user:u1')), null);
  t.deepEqual(['user:1', 'api_key:2', 'system:timer', 'cli', 'payer', 'setup', 'merchant'].map(actorKindOf), [
    'user',
    'api_key',
    'system',
    'cli',
    'payer',
    'setup',
    'other',
  ]);
});
