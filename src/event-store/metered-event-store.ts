import type { Metrics } from '../shared/metrics.ts';
import type { EventStore } from './event-store.ts';

/**
 * `store` counting the events this process appends, by type (`weir_events_appended_total`), once
 * the append succeeded: a refused append (a stale revision) counts nothing. Events other
 * processes append (`weir org create` beside `weir serve`) are theirs to count.
 */
export function meteredEventStore(store: EventStore, metrics: Metrics): EventStore {
  const appended = metrics.counter({
    name: 'weir_events_appended_total',
    help: 'Events this process appended to the log, by event type',
    labelNames: ['type'],
  });
  return {
    ...store,
    async append(streamId, events, expected) {
      const result = await store.append(streamId, events, expected);
      for (const event of events) appended.inc({ type: event.type });
      return result;
    },
  };
}
