import type { WeirConfig } from './config.ts';
import { READ_MODEL_INDEXES } from '../projections/all-projections.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import { openReadStore } from '../read-store/open-read-store.ts';
import { looksUnreachable, untilReachable } from '../shared/until-reachable.ts';
import { openEventLog, stderrWaiting, type WaitingLog } from './open-event-log.ts';

/**
 * Open the stores (embedded defaults when no URL is set). A KurrentDB or MongoDB that does not
 * answer yet (a container starting beside Weir) is waited for, with backoff, and said so.
 */
export async function openStores(
  config: Pick<WeirConfig, 'dataDir' | 'kurrentDbUrl' | 'mongoDbUrl' | 'eventStoreFile'>,
  waiting: WaitingLog = stderrWaiting,
  /** A read store given instead of opening one. */
  given?: ReadStore,
) {
  const retry = { retryable: looksUnreachable, log: waiting };
  const eventStore = await openEventLog(config, waiting);
  if (given) return { eventStore, readStore: given };
  // Projections build a new object for every change and never mutate a stored one.
  const readStore = await untilReachable(
    'MongoDB',
    () =>
      openReadStore({
        mongoDbUrl: config.mongoDbUrl,
        ...READ_MODEL_INDEXES,
        embeddedWrites: 'trusted',
        dataDir: config.dataDir,
      }),
    { ...retry, retryable: (error) => !!config.mongoDbUrl && looksUnreachable(error) },
  ).catch(async (error: unknown) => {
    // The log opened first is closed: a failed open leaves nothing open behind it.
    await eventStore.close();
    throw error;
  });
  return { eventStore, readStore };
}
