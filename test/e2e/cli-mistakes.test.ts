import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { createSqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { runWeir } from '../support/weir-process.ts';

// An operator's mistakes on the command line: each is one line naming what to fix, never a stack
// trace, and a refused command leaves nothing behind.

const tempDir = async (t: import('ava').ExecutionContext) => {
  const dir = await mkdtemp(join(tmpdir(), 'weir-cli-mistakes-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
};

const STACK_FRAME = /\n\s+at /;

/** A port another listener holds until the test ends. */
const holdPort = async (t: import('ava').ExecutionContext): Promise<number> => {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  t.teardown(() => holder.close());
  return (holder.address() as import('node:net').AddressInfo).port;
};

test('an unknown option or a stray word is refused (exit 2), naming it, before anything is created: it used to run on the default instead', async (t) => {
  const dataDir = join(await tempDir(t), 'data');
  const unquoted = await runWeir(['org', 'create', '--name', 'My', 'Shop', '--data-dir', dataDir]);
  t.is(unquoted.status, 2, unquoted.stdout);
  t.regex(unquoted.stderr, /^weir: org create: unexpected argument "Shop" \(quote a value with spaces/);
  t.is(unquoted.stdout, '');
  const typo = await runWeir(['serve', '--prot', '9000', '--data-dir', dataDir]);
  t.is(typo.status, 2);
  t.regex(typo.stderr, /^weir: serve: unknown option --prot/);
  t.false(existsSync(dataDir), 'nothing was written');
  const flagValue = await runWeir(['audit', 'verify', '--json=yes', '--data-dir', dataDir]);
  t.is(flagValue.status, 2);
  t.regex(flagValue.stderr, /--json takes no value/);
});

test('a setting found unusable as weir serve starts (the sweeper key, the devnet file) is one line naming it, exit 2, no stack trace', async (t) => {
  const dir = await tempDir(t);
  const common = ['serve', '--local-chain', 'off', '--port', '0'];
  const key = await runWeir([...common, '--data-dir', join(dir, 'a'), '--sweeper-key', '0x12']);
  t.is(key.status, 2, key.stderr);
  t.regex(key.stderr, /^weir: WEIR_SWEEPER_KEY must be a private key/);
  t.notRegex(key.stderr, STACK_FRAME);
  const devnet = await runWeir([...common, '--data-dir', join(dir, 'b'), '--devnet', join(dir, 'missing.json')]);
  t.is(devnet.status, 2, devnet.stderr);
  t.regex(devnet.stderr, /^weir: devnet info .*missing\.json is not usable: the file does not exist/);
  t.notRegex(devnet.stderr, STACK_FRAME);
});

test('weir serve on a port another process holds says so in one line (exit 1), no stack trace', async (t) => {
  const port = await holdPort(t);
  const dataDir = await tempDir(t);
  const run = await runWeir(['serve', '--local-chain', 'off', '--port', String(port), '--data-dir', dataDir]);
  t.is(run.status, 1, run.stderr);
  t.regex(
    run.stderr,
    new RegExp(
      `^weir: port ${port} on 127\\.0\\.0\\.1 is in use: stop what listens there, or choose another port`,
      'm',
    ),
  );
  t.notRegex(run.stderr, STACK_FRAME);
});

test('weir audit verify of a data dir that holds no log fails (exit 2) and creates nothing: a mistyped one used to "hold"', async (t) => {
  const dataDir = join(await tempDir(t), 'no-such-dir');
  const run = await runWeir(['audit', 'verify', '--data-dir', dataDir]);
  t.is(run.status, 2, run.stderr);
  t.regex(run.stderr, /^weir: audit verify: no event log at .*no-such-dir\/events\.sqlite3/);
  t.false(existsSync(dataDir));
});

test('weir replay and weir backup of a data dir that holds no log fail (exit 2) and create nothing: replay made an empty log there and said OK', async (t) => {
  const dataDir = join(await tempDir(t), 'no-such-dir');
  const out = join(await tempDir(t), 'backup');
  for (const [command, args] of [
    ['replay', ['replay']],
    ['backup', ['backup', '--out', out]],
  ] as const) {
    const run = await runWeir([...args, '--data-dir', dataDir]);
    t.is(run.status, 2, run.stderr);
    t.regex(
      run.stderr,
      new RegExp(`^weir: ${command}: no event log at .*no-such-dir/events\\.sqlite3: check --data-dir`),
    );
    t.false(existsSync(dataDir), `${command} created nothing`);
  }
  t.false(existsSync(out));
});

test('weir org create on a data dir with no log yet says it started a new one (a mistyped --data-dir gave keys a running serve answered 401, silently); on an existing log it says nothing', async (t) => {
  const dataDir = join(await tempDir(t), 'fresh');
  const first = await runWeir(['org', 'create', '--name', 'First', '--data-dir', dataDir]);
  t.is(first.status, 0, first.stderr);
  t.is(
    first.stderr,
    `weir: org create: no log at ${join(dataDir, 'events.sqlite3')} yet, so a new one was started there: only a weir serve on that data dir knows this organization (check --data-dir if yours runs on another)\n`,
  );
  const second = await runWeir(['org', 'create', '--name', 'Second', '--data-dir', dataDir]);
  t.is(second.status, 0, second.stderr);
  t.is(second.stderr, '');
});

test('weir inspect of a data dir that holds no log fails (exit 2) and creates nothing: it made an empty data dir there and said the record did not exist; its id may follow the options (was "inspect needs a record id")', async (t) => {
  const dataDir = join(await tempDir(t), 'no-such-dir');
  const id = '27578ba2-de69-5c74-8aa9-57045eaa723d';
  for (const args of [
    [id, '--data-dir', dataDir],
    ['--step-ms', '100', id, '--data-dir', dataDir],
    ['--data-dir', dataDir, id],
  ]) {
    const run = await runWeir(['inspect', ...args]);
    t.is(run.status, 2, run.stderr);
    t.regex(run.stderr, /^weir: inspect: no event log at .*no-such-dir\/events\.sqlite3: check --data-dir/);
  }
  t.false(existsSync(dataDir));
});

test('weir audit export of a data dir that holds no log fails (exit 2) and creates nothing, as verify does', async (t) => {
  const dataDir = join(await tempDir(t), 'no-such-dir');
  const run = await runWeir(['audit', 'export', '--org', crypto.randomUUID(), '--data-dir', dataDir]);
  t.is(run.status, 2, run.stderr);
  t.regex(run.stderr, /^weir: audit export: no event log at .*no-such-dir\/events\.sqlite3/);
  t.false(existsSync(dataDir));
});

test("weir audit export --org of no organization in the log, to stdout, writes nothing (exit 2): it streamed every other tenant's links first", async (t) => {
  const dataDir = await tempDir(t);
  t.is((await runWeir(['org', 'create', '--name', 'Shop', '--data-dir', dataDir])).status, 0);
  const stranger = crypto.randomUUID();
  const run = await runWeir(['audit', 'export', '--org', stranger, '--data-dir', dataDir]);
  t.is(run.status, 2, run.stderr);
  t.is(run.stdout, '');
  t.is(run.stderr, `weir: audit export: the log holds no event of ${stranger}: check --org\n`);
});

test('weir audit checkpoint, printing or signing, of a data dir that holds no log fails (exit 2) and creates nothing: it made an empty log there', async (t) => {
  const dataDir = join(await tempDir(t), 'no-such-dir');
  for (const args of [[], ['--write']]) {
    const run = await runWeir(['audit', 'checkpoint', ...args, '--data-dir', dataDir]);
    t.is(run.status, 2, run.stderr);
    t.regex(run.stderr, /^weir: audit checkpoint: no event log at .*no-such-dir\/events\.sqlite3: check --data-dir/);
    t.false(existsSync(dataDir), `nothing was created (${args.join(' ') || 'printing'})`);
  }
});

test("weir audit checkpoint without --write reads the log read-only: an auditor's copy keeps its modes", async (t) => {
  const dataDir = await tempDir(t);
  t.is((await runWeir(['org', 'create', '--name', 'Copied', '--data-dir', dataDir])).status, 0);
  await chmod(join(dataDir, 'events.sqlite3'), 0o444);
  await chmod(dataDir, 0o755);
  const run = await runWeir(['audit', 'checkpoint', '--data-dir', dataDir]);
  t.is(run.status, 1, run.stderr);
  t.regex(run.stderr, /the log holds no signed checkpoint yet/);
  t.is((await stat(dataDir)).mode & 0o777, 0o755, 'the directory keeps its mode');
  t.is((await stat(join(dataDir, 'events.sqlite3'))).mode & 0o777, 0o444, 'the log keeps its mode');
});

test('weir audit checkpoint --write on a log with no events says there is nothing to sign (exit 1), not to use --write', async (t) => {
  const dataDir = await tempDir(t);
  await createSqliteEventStore({ path: join(dataDir, 'events.sqlite3') }).close();
  const run = await runWeir(['audit', 'checkpoint', '--write', '--data-dir', dataDir]);
  t.is(run.status, 1, run.stderr);
  t.regex(run.stderr, /\nweir audit checkpoint: the log holds no events yet: nothing to sign\n$/);
  t.notRegex(run.stderr, /--write/);
  t.is(run.stdout, '');
});

test('weir machines export --out where no folder can be made (under /proc) fails at once (exit 1) in one line naming it, where it hung', async (t) => {
  if (!existsSync('/proc/self')) return t.pass('no /proc here');
  const run = await runWeir(['machines', 'export', '--out', '/proc/weir-machines']);
  t.is(run.status, 1, run.stderr);
  t.is(run.stderr, 'weir: /proc/weir-machines: /proc takes no new folder (ENOENT)\n');
  t.is(run.stdout, '');
});

test('weir devnet --out where no folder can be made fails (exit 1) in one line naming it before any chain starts, where it failed once all three had', async (t) => {
  // The chains' ports are held: had any chain been started, it would have failed on its port first.
  const held = await Promise.all([0, 1, 2].map(() => holdPort(t)));
  const dir = await tempDir(t);
  await writeFile(join(dir, 'a-file'), '');
  const folder = join(dir, 'a-file', 'devnet');
  const [evm, solana, tron] = held.map(String) as [string, string, string];
  const run = await runWeir([
    'devnet',
    ...['--port', evm, '--solana-port', solana, '--tron-port', tron],
    ...['--out', join(folder, 'devnet.json')],
  ]);
  t.is(run.status, 1, run.stderr);
  t.is(run.stderr, `weir: ${folder}: a file stands where a folder is needed (ENOTDIR)\n`);
  t.is(run.stdout, '');
});

test("weir devnet on a port another process holds says so in one line naming the port and its option (exit 1), no stack trace: anvil's taken port printed a HardhatNodeStartError", async (t) => {
  const held = await holdPort(t);
  const cases = [
    ['--port', ['--port', String(held), '--solana-port', '0']],
    ['--solana-port', ['--port', '0', '--solana-port', String(held)]],
    ['--tron-port', ['--port', '0', '--solana-port', '0', '--tron-port', String(held)]],
  ] as const;
  for (const [option, args] of cases) {
    const run = await runWeir(['devnet', ...args]);
    t.is(run.status, 1, run.stderr);
    t.is(
      run.stderr,
      `weir: port ${held} on 127.0.0.1 is in use: stop what listens there, or choose another port (${option})\n`,
    );
    t.is(run.stdout, '');
  }
});

test('weir health --url that is no http(s) URL is a usage error (exit 2) naming it, not "no answer (is weir serve running there?)"', async (t) => {
  const run = await runWeir(['health', '--url', '127.0.0.1:8080']);
  t.is(run.status, 2, run.stderr);
  t.regex(
    run.stderr,
    /^weir: health: --url must be an http:\/\/ or https:\/\/ URL \(http:\/\/127\.0\.0\.1:8080\), got 127\.0\.0\.1:8080/,
  );
});

test('weir health --url holding a user and password is refused (exit 2) without printing the password: fetch refused it, which read as "no answer"', async (t) => {
  const refused = await runWeir(['health', '--url', 'ftp://u:secret@127.0.0.1:8080']);
  t.is(refused.status, 2, refused.stderr);
  t.regex(refused.stderr, /got ftp:\/\/\*\*\*@127\.0\.0\.1:8080/);
  const credentials = await runWeir(['health', '--url', 'http://u:secret@127.0.0.1:1']);
  t.is(credentials.status, 2, credentials.stderr);
  t.is(
    credentials.stderr,
    'weir: health: --url must not hold a user or password (/health asks for none), got http://***@127.0.0.1:1\n',
  );
  for (const run of [refused, credentials]) t.notRegex(`${run.stdout}${run.stderr}`, /secret/);
});
