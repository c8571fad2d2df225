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

/** An event store that lists the streams read, in order. */
export function readCountingStore(eventStore: EventStore): EventStore & { reads: string[] } {
  const reads: string[] = [];
  return {
    ...eventStore,
    async readStream(id) {
      reads.push(id);
      return eventStore.readStream(id);
    },
    reads,
  };
}

/** An event store whose every append loses a race: it counts the appends, and refuses each as a stale revision. */
export function alwaysConflictingStore(eventStore: EventStore): EventStore & { appends(): number } {
  let appends = 0;
  return {
    ...eventStore,
    async append(streamId, _events, expected) {
      appends++;
      throw new WrongExpectedRevisionError(streamId, expected, 0);
    },
    appends: () => appends,
  };
}
