/**
 * A backup (or a data dir restored from one) that does not hold: a SQLite file fails its check, or
 * the log and the read models are not from one data dir. Its own module, so `weir`'s error handler
 * knows it without loading SQLite. The command line prints the message alone, exit 1.
 */
export class BackupCheckError extends Error {
  override readonly name = 'BackupCheckError';
}
