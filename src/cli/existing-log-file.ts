import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, type WeirConfig } from '../app/config.ts';
import { SQLITE_EVENT_STORE_FILE } from '../event-store/open-event-store.ts';

// Apart from ./audit.ts, so that weir replay checks its log without loading the audit bundle's schemas (zod).
/** The embedded log's file, which must be there: a mistyped --data-dir is a usage error, never a new empty log. */
export function existingLogFile(config: WeirConfig, command: string): string {
  const path = config.eventStoreFile ?? join(config.dataDir, SQLITE_EVENT_STORE_FILE);
  if (!existsSync(path))
    throw new ConfigError(`${command}: no event log at ${path}: check --data-dir (or --event-store-file)`);
  return path;
}
