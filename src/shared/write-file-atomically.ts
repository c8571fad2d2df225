import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** The file operations a write uses; a test swaps one to make it fail part way. */
export type AtomicWriteFs = {
  open: typeof open;
  rename: typeof rename;
};

const nodeFs: AtomicWriteFs = { open, rename };

/**
 * Replaces `path` with `content` so that a crash or a failure leaves either the old file or the
 * new one, whole: written to a temporary file beside it (ending `.tmp`, which backups leave out),
 * flushed to disk, renamed over it, and the directory flushed so the rename itself survives a power
 * loss. On failure the temporary file is removed and the error thrown. `mode` applies to a new file (default 0600).
 */
export async function writeFileAtomically(
  path: string,
  content: string | Uint8Array,
  options: { mode?: number; fs?: AtomicWriteFs } = {},
): Promise<void> {
  const fs = options.fs ?? nodeFs;
  const dir = dirname(path);
  const temporary = join(dir, `${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const handle = await fs.open(temporary, 'wx', options.mode ?? 0o600);
    try {
      await handle.writeFile(content);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined);
    throw error;
  }
  await syncDirectory(dir, fs);
}

/** Flushes a directory's entries (a rename in it) to disk. */
async function syncDirectory(dir: string, fs: AtomicWriteFs): Promise<void> {
  const handle = await fs.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
