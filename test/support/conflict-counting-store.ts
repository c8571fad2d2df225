import { WrongExpectedRevisionError, type EventStore } from '../../src/event-store/event-store.ts';

/** An event store that counts the appends it rejected for a stale expected revision. */
export function conflictCountingStore(eventStore: EventStore): EventStore & { conflicts(): number } {
  let conflicts = 0;
  return {
    ...eventStore,
    async append(streamId, events, expected) {
      try {
        return await eventStore.append(streamId, events, expected);
      } catch (error) {
        if (error instanceof WrongExpectedRevisionError) conflicts++;
        throw error;
      }
    },
    conflicts: () => conflicts,
  };
}
