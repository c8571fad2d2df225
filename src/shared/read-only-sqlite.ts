import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import Database from 'better-sqlite3';

/** A SQLite file opened for reading only; `release` closes it (and drops the snapshot, if one was taken). */
export type ReadOnlySqlite = { db: Database.Database; snapshot: boolean; release(): void };

/** SQLite's answers when a WAL file's directory cannot be written (no `-shm` can be made beside it). */
const UNWRITABLE_DIRECTORY = new Set(['SQLITE_READONLY_DIRECTORY', 'SQLITE_CANTOPEN', 'SQLITE_READONLY']);

const tryOpen = (path: string, timeout: number): Database.Database => {
  const db = new Database(path, { readonly: true, fileMustExist: true, timeout });
  try {
    // The first read is what finds a WAL file's directory unwritable.
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
};

/**
 * Opens an existing file without writing it: beside a live writer it reads the file itself; a copy
 * handed to an auditor in a directory it cannot write (a WAL file needs its `-shm` beside it) is
 * read from a private snapshot in the temp directory, made from the file and its `-wal`.
 */
export function openReadOnlySqlite(path: string, timeout = 5000): ReadOnlySqlite {
  try {
    const db = tryOpen(path, timeout);
    return { db, snapshot: false, release: () => db.close() };
  } catch (error) {
    const code = error instanceof Database.SqliteError ? error.code : null;
    if (code === null || !UNWRITABLE_DIRECTORY.has(code) || !existsSync(path)) throw error;
  }
  const dir = mkdtempSync(join(tmpdir(), 'weir-read-only-'));
  try {
    const copy = join(dir, basename(path));
    copyFileSync(path, copy);
    if (existsSync(`${path}-wal`)) copyFileSync(`${path}-wal`, `${copy}-wal`);
    const db = tryOpen(copy, timeout);
    return {
      db,
      snapshot: true,
      release: () => {
        db.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
