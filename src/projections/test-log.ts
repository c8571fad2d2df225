import type { RecordedEvent } from '../event-store/event-store.ts';

/**
 * A little log for projection tests: each event appended gets the next position and its stream's
 * next revision, with tenant metadata (`org-1` in `test` unless told) and the time `at`.
 */
export function createTestLog(at: string) {
  const events: RecordedEvent[] = [];
  const revisions = new Map<string, number>();
  const append = (streamId: string, event: { type: string; data: object }, organizationId = 'org-1'): RecordedEvent => {
    const revision = revisions.get(streamId) ?? 0;
    revisions.set(streamId, revision + 1);
    const recorded = {
      id: `event-${events.length}`,
      streamId,
      revision,
      position: BigInt(events.length + 1),
      type: event.type,
      data: event.data,
      metadata: { organizationId, environment: 'test', actor: 'test', correlationId: 'c', occurredAt: at },
    } as unknown as RecordedEvent;
    events.push(recorded);
    return recorded;
  };
  return { events, append };
}
