import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { systemProblem } from './system-problem.ts';

const failure = (code: string, syscall: string, path: string) =>
  Object.assign(new Error(`${code}: ${syscall} '${path}'`), { code, syscall, path });

test('a path that cannot be written says why in a line: its folder missing, refusing new folders (/proc), or a folder in the way', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'weir-system-problem-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'file'), '');
  t.is(
    systemProblem(failure('ENOENT', 'open', join(dir, 'missing', 'out.ndjson'))),
    `${join(dir, 'missing', 'out.ndjson')}: its folder ${join(dir, 'missing')} does not exist (ENOENT)`,
  );
  t.is(systemProblem(failure('ENOENT', 'mkdir', '/proc/x')), '/proc/x: /proc takes no new folder (ENOENT)');
  t.is(systemProblem(failure('ENOENT', 'open', join(dir, 'gone'))), `${join(dir, 'gone')}: does not exist (ENOENT)`);
  t.is(systemProblem(failure('EISDIR', 'open', dir)), `${dir}: a folder stands where a file is needed (EISDIR)`);
  t.is(
    systemProblem(failure('EEXIST', 'mkdir', join(dir, 'file'))),
    `${join(dir, 'file')}: exists already, and not as a folder (EEXIST)`,
  );
  t.is(systemProblem(failure('EBADF', 'open', dir)), null, 'anything else keeps its stack trace');
  t.is(systemProblem(new Error('no code')), null);
});
