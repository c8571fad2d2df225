import type { WeirConfig } from './config.ts';
import { openEventStore } from '../event-store/open-event-store.ts';
import { looksUnreachable, untilReachable } from '../shared/until-reachable.ts';

// Apart from start-weir.ts: a command that only appends (weir org create) loads the log, not the server.

/** What a service not up yet is logged as while Weir waits for it. */
export type WaitingLog = Parameters<typeof untilReachable>[2]['log'];

export const stderrWaiting: WaitingLog = (line) => console.error(`[weir] ${line}`);

/** The event log, waited for while a configured KurrentDB is unreachable. */
export function openEventLog(
  config: Pick<WeirConfig, 'dataDir' | 'kurrentDbUrl' | 'eventStoreFile'>,
  waiting: WaitingLog = stderrWaiting,
) {
  return untilReachable(
    'KurrentDB',
    () => openEventStore({ kurrentDbUrl: config.kurrentDbUrl, dataDir: config.dataDir, file: config.eventStoreFile }),
    { retryable: (error) => !!config.kurrentDbUrl && looksUnreachable(error), log: waiting },
  );
}
