import type { EventMetadata } from '../event-store/event-store.ts';

/** The metadata of the events the audit tests write by hand: one tenant, written from the CLI. */
export const auditTestMetadata: EventMetadata = {
  organizationId: 'org-1',
  environment: 'test',
  actor: 'cli',
  correlationId: 'c',
  occurredAt: 'x',
};
