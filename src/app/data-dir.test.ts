import { spawnSync } from 'node:child_process';
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { createLineLogger, logTo } from '../shared/logger.ts';
import { DataDirInUseError, lockDataDir, prepareDataDir, SERVE_LOCK_FILE } from './data-dir.ts';

// What an operator's shell usually has: without Weir's care, new files would be readable by all.
process.umask(0o022);

const tempDir = async (t: ExecutionContext) => {
  const dir = await mkdtemp(join(tmpdir(), 'weir-data-dir-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
};
const modeOf = async (path: string) => (await lstat(path)).mode & 0o777;

/** A pid that no running process holds. */
const deadPid = (): number => spawnSync(process.execPath, ['-e', '']).pid;

test('prepareDataDir creates a missing data dir (and its parents) for the owner alone, and logs nothing', async (t) => {
  const dataDir = join(await tempDir(t), 'a', 'data');
  const lines: string[] = [];
  await prepareDataDir(dataDir, (line) => lines.push(line));
  t.is(await modeOf(dataDir), 0o700);
  t.deepEqual(lines, []);
});

test('prepareDataDir takes group and other access away from an existing data dir and all it holds, naming each in one log line; links are left alone', async (t) => {
  const root = await tempDir(t);
  const dataDir = join(root, 'data');
  await mkdir(join(dataDir, 'outbox'), { recursive: true });
  await chmod(dataDir, 0o755);
  await chmod(join(dataDir, 'outbox'), 0o775);
  await writeFile(join(dataDir, 'events.sqlite3'), '', { mode: 0o644 });
  await writeFile(join(dataDir, 'outbox', 'a.eml'), '', { mode: 0o640 });
  await writeFile(join(dataDir, 'master.key'), '', { mode: 0o600 });
  await writeFile(join(root, 'elsewhere'), '', { mode: 0o644 });
  await symlink(join(root, 'elsewhere'), join(dataDir, 'link'));
  const lines: string[] = [];
  await prepareDataDir(dataDir, (line) => lines.push(line));
  t.deepEqual(lines, [
    `[weir] data dir ${dataDir}: took group and other access away from 4 entries: . 0755 → 0700, events.sqlite3 0644 → 0600, outbox 0775 → 0700, outbox/a.eml 0640 → 0600`,
  ]);
  t.is(await modeOf(dataDir), 0o700);
  t.is(await modeOf(join(dataDir, 'outbox')), 0o700);
  t.is(await modeOf(join(dataDir, 'events.sqlite3')), 0o600);
  t.is(await modeOf(join(dataDir, 'outbox', 'a.eml')), 0o600);
  t.is(await modeOf(join(dataDir, 'master.key')), 0o600);
  t.is((await stat(join(root, 'elsewhere'))).mode & 0o777, 0o644, 'what a link points to is not the data dir');
  lines.length = 0;
  await prepareDataDir(dataDir, (line) => lines.push(line));
  t.deepEqual(lines, [], 'nothing left to tighten');
});

test('prepareDataDir skips entries removed while it walks (a running serve removes its journal, an outbox draft): no crash, none named', async (t) => {
  const dataDir = await tempDir(t);
  await chmod(dataDir, 0o755);
  await mkdir(join(dataDir, 'outbox'), { mode: 0o755 });
  await writeFile(join(dataDir, 'events.sqlite3'), '', { mode: 0o644 });
  await writeFile(join(dataDir, 'events.sqlite3-journal'), '', { mode: 0o644 });
  await writeFile(join(dataDir, 'draft.tmp'), '', { mode: 0o644 });
  // Each removed just before the walk's next call on it: after readdir, after lstat, after lstat of a directory.
  const removedBefore = { lstat: 'events.sqlite3-journal', chmod: 'draft.tmp', readdir: 'outbox' };
  const removing = async (path: string, call: keyof typeof removedBefore) => {
    if (path === join(dataDir, removedBefore[call])) await rm(path, { recursive: true, force: true });
  };
  const lines: string[] = [];
  await prepareDataDir(dataDir, (line) => lines.push(line), {
    lstat: (async (path: string) => {
      await removing(path, 'lstat');
      return lstat(path);
    }) as typeof lstat,
    chmod: async (path, mode) => {
      await removing(String(path), 'chmod');
      return chmod(path, mode);
    },
    readdir: async (path) => {
      await removing(path, 'readdir');
      return readdir(path);
    },
  });
  t.deepEqual(lines, [
    `[weir] data dir ${dataDir}: took group and other access away from 3 entries: . 0755 → 0700, events.sqlite3 0644 → 0600, outbox 0755 → 0700`,
  ]);
  t.is(await modeOf(join(dataDir, 'events.sqlite3')), 0o600);
});

test('one weir serve per data dir: the lock holds the pid; a second lock is refused naming it; release removes it', async (t) => {
  const dataDir = await tempDir(t);
  const release = await lockDataDir(dataDir, () => {});
  t.is(await readFile(join(dataDir, SERVE_LOCK_FILE), 'utf8'), `${process.pid}\n`);
  t.is(await modeOf(join(dataDir, SERVE_LOCK_FILE)), 0o600);
  const refused = await t.throwsAsync(
    lockDataDir(dataDir, () => {}),
    { instanceOf: DataDirInUseError },
  );
  t.is(refused.pid, process.pid);
  t.regex(refused.message, new RegExp(`^another weir serve \\(pid ${process.pid}\\) is using the data dir `));
  t.is(await readFile(join(dataDir, SERVE_LOCK_FILE), 'utf8'), `${process.pid}\n`, 'the refused one leaves it');
  await release();
  await t.throwsAsync(stat(join(dataDir, SERVE_LOCK_FILE)), { code: 'ENOENT' });
  const again = await lockDataDir(dataDir, () => {});
  await again();
});

test('a lock left by a process that is gone (kill -9), or by an earlier run with this pid (a restarted container), is taken over and logged', async (t) => {
  const dataDir = await tempDir(t);
  for (const stale of [deadPid(), process.pid]) {
    await writeFile(join(dataDir, SERVE_LOCK_FILE), `${stale}\n`);
    const lines: string[] = [];
    const release = await lockDataDir(dataDir, (line) => lines.push(line));
    t.deepEqual(lines, [
      `[weir] data dir ${dataDir}: taking over the lock of weir serve pid ${stale}, which is no longer running`,
    ]);
    t.is(await readFile(join(dataDir, SERVE_LOCK_FILE), 'utf8'), `${process.pid}\n`);
    await release();
  }
});

test('a lock held by another live process is refused, whether or not this user may signal it', async (t) => {
  const dataDir = await tempDir(t);
  // pid 1 (init) is always alive; unless this runs as root, kill(1, 0) answers EPERM.
  await writeFile(join(dataDir, SERVE_LOCK_FILE), '1\n');
  const refused = await t.throwsAsync(
    lockDataDir(dataDir, () => {}),
    { instanceOf: DataDirInUseError },
  );
  t.is(refused.pid, 1);
});

/** A `Log` onto pino, as weir serve gives, and the JSON lines it wrote. */
const pinoLines = () => {
  const lines: Record<string, unknown>[] = [];
  return { lines, log: logTo(createLineLogger((line) => lines.push(JSON.parse(line) as Record<string, unknown>))) };
};

test('the lock and permission lines are structured: each has its event, the data dir and what it is about, so an operator can filter them', async (t) => {
  const dataDir = await tempDir(t);
  const stale = deadPid();
  await writeFile(join(dataDir, SERVE_LOCK_FILE), `${stale}\n`, { mode: 0o644 });
  const { lines, log } = pinoLines();
  await prepareDataDir(dataDir, log);
  const release = await lockDataDir(dataDir, log);
  await release();
  t.is(lines.length, 2, JSON.stringify(lines));
  t.like(lines[0], { level: 30, component: 'weir', event: 'data_dir.access_tightened', dataDir, entries: 1 });
  t.like(lines[1], {
    level: 30,
    component: 'weir',
    event: 'data_dir.lock_taken_over',
    dataDir,
    lockFile: join(dataDir, SERVE_LOCK_FILE),
    stalePid: stale,
    msg: `data dir ${dataDir}: taking over the lock of weir serve pid ${stale}, which is no longer running`,
  });
});
