import { mkdtemp, open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { writeFileAtomically, type AtomicWriteFs } from './write-file-atomically.ts';

async function folder(t: ExecutionContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'weir-atomic-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test('writes the file whole, private, and flushes the file and then its directory', async (t) => {
  const dir = await folder(t);
  const file = join(dir, 'cursor.json');
  const synced: string[] = [];
  const fs: AtomicWriteFs = {
    rename,
    open: (async (path: string, flags?: string, mode?: number) => {
      const handle = await open(path, flags, mode);
      const sync = handle.sync.bind(handle);
      handle.sync = async () => {
        synced.push(path === dir ? 'directory' : 'file');
        return sync();
      };
      return handle;
    }) as AtomicWriteFs['open'],
  };
  await writeFileAtomically(file, '{"next":1}', { fs });
  await writeFileAtomically(file, '{"next":2}', { fs });
  t.is(await readFile(file, 'utf8'), '{"next":2}');
  t.deepEqual(synced, ['file', 'directory', 'file', 'directory']);
  t.deepEqual(await readdir(dir), ['cursor.json'], 'no temporary file left');
});

test('a write that fails part way leaves the old content and no temporary file', async (t) => {
  const dir = await folder(t);
  const file = join(dir, 'cursor.json');
  await writeFile(file, '{"next":1}');
  const failingSync: AtomicWriteFs = {
    rename,
    open: (async (path: string, flags?: string, mode?: number) => {
      const handle = await open(path, flags, mode);
      handle.sync = async () => {
        throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
      };
      return handle;
    }) as AtomicWriteFs['open'],
  };
  await t.throwsAsync(writeFileAtomically(file, '{"next":2}', { fs: failingSync }), { message: /EIO/ });
  t.is(await readFile(file, 'utf8'), '{"next":1}');
  t.deepEqual(await readdir(dir), ['cursor.json']);

  const failingRename: AtomicWriteFs = {
    open,
    rename: async () => {
      throw Object.assign(new Error('EXDEV: cross-device link'), { code: 'EXDEV' });
    },
  };
  await t.throwsAsync(writeFileAtomically(file, '{"next":3}', { fs: failingRename }), { message: /EXDEV/ });
  t.is(await readFile(file, 'utf8'), '{"next":1}');
  t.deepEqual(await readdir(dir), ['cursor.json']);
});
