import type { Bus } from './bus.ts';
import { join } from 'node:path';
import { createInProcessBus } from './in-process-bus.ts';
import { openSqliteBusStore, SQLITE_BUS_FILE } from './in-process-bus-store.ts';
import { createNatsJetStreamBus } from './nats-jetstream-bus.ts';

export type OpenBusOptions = {
  /** NATS server URL: when set (non-empty) the bus is NATS JetStream, else the in-process bus. */
  natsUrl?: string | undefined;
  /**
   * The in-process bus keeps its messages in this folder's `bus.sqlite3`, so what was published and
   * not yet handled survives a stop or a crash (followers save their checkpoints past it); in memory without one.
   */
  dataDir?: string | undefined;
  /** NATS: trouble outside any call (the connection lost, a consumer's loop failing), and lines about a durable's state. */
  onError?: (error: Error) => void;
  log?: (line: string) => void;
};

/** The bus for this process: NATS JetStream when a URL is given, else in-process (no services needed), on disk in `dataDir`. */
export async function openBus(options: OpenBusOptions = {}): Promise<Bus> {
  const natsUrl = options.natsUrl?.trim();
  if (natsUrl !== undefined && natsUrl !== '')
    return createNatsJetStreamBus({
      servers: natsUrl,
      ...(options.onError ? { onError: options.onError } : {}),
      ...(options.log ? { log: options.log } : {}),
    });
  if (options.dataDir === undefined) return createInProcessBus();
  return createInProcessBus({ store: openSqliteBusStore(join(options.dataDir, SQLITE_BUS_FILE)) });
}
