import { existsSync } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { makeDirectory } from './make-directory.ts';
import { settleWithin } from './settle-within.ts';

const tempDir = async (t: import('ava').ExecutionContext) => {
  const dir = await mkdtemp(join(tmpdir(), 'weir-make-directory-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
};

test('makes the folder and its missing parents with the mode given; one already there is taken as it is', async (t) => {
  const dir = await tempDir(t);
  const deep = join(dir, 'a', 'b', 'c');
  await makeDirectory(deep, 0o700);
  t.true((await stat(deep)).isDirectory());
  t.is((await stat(join(dir, 'a'))).mode & 0o777, 0o700);
  await makeDirectory(deep);
  await makeDirectory(dir);
});

test('a file in the way is refused as EEXIST (the path itself) or ENOTDIR (a parent)', async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'file');
  await writeFile(file, '');
  await t.throwsAsync(makeDirectory(file), { code: 'EEXIST' });
  await t.throwsAsync(makeDirectory(join(file, 'sub', 'deeper')), { code: 'ENOTDIR' });
});

// Node's recursive mkdir never settles there: `weir machines export --out /proc/x` hung.
test('a folder that refuses new entries (/proc) fails at once with ENOENT naming the path, where it hung', async (t) => {
  if (!existsSync('/proc/self')) return t.pass('no /proc here');
  const outcome = await settleWithin(makeDirectory('/proc/weir-no-such/deeper'), 5000);
  t.false('timedOut' in outcome, 'settled');
  t.like('rejected' in outcome ? outcome.rejected : null, {
    code: 'ENOENT',
    syscall: 'mkdir',
    path: '/proc/weir-no-such',
  });
});
