import { existsSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { apiClient, eventually } from '../support/api-client.ts';
import { createJsonRpc } from '../../src/chain-ingest/evm/devnet/json-rpc.ts';
import { INDEXED_FIELDS } from '../../src/projections/all-projections.ts';
import { collectOutput, runWeir, spawnWeir } from '../support/weir-process.ts';

const tempDir = async (t: import('ava').ExecutionContext) => {
  const dir = await mkdtemp(join(tmpdir(), 'weir-cli-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
};

/** A failed fetch with its cause (undici's TypeError says only 'fetch failed'). */
const failure = (error: unknown) =>
  error instanceof Error && error.cause !== undefined ? `${String(error)}: ${String(error.cause)}` : String(error);

test('weir org create on the data dir of a running weir serve: the server picks the organization up without a restart', async (t) => {
  const dataDir = await tempDir(t);
  const server = await spawnWeir({ dataDir });
  t.teardown(() => server.kill());
  const created = await runWeir(['org', 'create', '--name', 'Late Bakery'], { WEIR_DATA_DIR: dataDir });
  t.is(created.status, 0, created.stderr);
  const org = JSON.parse(created.stdout) as { organizationId: string; testSecretKey: string; liveSecretKey: string };
  t.regex(org.testSecretKey, /^sk_test_[0-9A-Za-z]{40}$/);
  t.regex(org.liveSecretKey, /^sk_live_[0-9A-Za-z]{40}$/);
  const body = await eventually(async () => {
    const r = await apiClient(server.url, org.testSecretKey).get<{ id: string; name: string }>('/api/v1/organization');
    return r.status === 200 ? r.body : undefined;
  }, 'the new key to work');
  t.is(body.id, org.organizationId);
  t.is(body.name, 'Late Bakery');
  const live = await apiClient(server.url, org.liveSecretKey).get<{ environment: string }>('/api/v1/organization');
  t.is(live.body.environment, 'live');
  // The log holds only hashes of the keys.
  const log = await readFile(join(dataDir, 'events.sqlite3'));
  t.false(log.includes(org.testSecretKey));
});

test('weir health asks a running weir serve (by --url, or by PORT and HOST as serve reads them) and exits 0; with nothing listening it exits 1 and says so', async (t) => {
  const dataDir = await tempDir(t);
  const server = await spawnWeir({ dataDir });
  t.teardown(() => server.kill());
  const byUrl = await runWeir(['health', '--url', server.url]);
  t.is(byUrl.status, 0, byUrl.stderr);
  const report = JSON.parse(byUrl.stdout) as { status: string; checks: { name: string; status: string }[] };
  t.is(report.status, 'ok');
  t.deepEqual(
    report.checks.map((c) => c.name),
    ['event_store', 'projections', 'matcher', 'timers', 'webhooks'],
  );
  const port = new URL(server.url).port;
  t.is((await runWeir(['health'], { PORT: port, HOST: '0.0.0.0' })).status, 0);
  await server.kill();
  const down = await runWeir(['health', '--port', port]);
  t.is(down.status, 1);
  t.regex(down.stderr, new RegExp(`weir health: http://127\\.0\\.0\\.1:${port}/health: no answer`));
});

test('weir org create without a name fails with a clear message', async (t) => {
  const result = await runWeir(['org', 'create'], { WEIR_DATA_DIR: '/nonexistent-never-created' });
  t.is(result.status, 2);
  t.regex(result.stderr, /--name/);
});

test('--help after a command prints the usage and starts nothing (weir serve --help used to start a server)', async (t) => {
  const dataDir = await tempDir(t);
  for (const args of [['serve', '--help'], ['org', 'create', '-h'], ['--help']]) {
    const result = await runWeir(args, { WEIR_DATA_DIR: join(dataDir, 'data'), PORT: '0', WEIR_LOCAL_CHAIN: 'off' });
    t.is(result.status, 0, `${args.join(' ')}: ${result.stderr}`);
    t.regex(result.stdout, /^Usage: weir <command> \[options\]/, args.join(' '));
    t.regex(result.stdout, /--data-dir/, 'the options are listed');
  }
  await t.throwsAsync(stat(join(dataDir, 'data')), { code: 'ENOENT' }, 'no data dir was created');
});

test('weir machines export writes Stately-importable JSON for every machine', async (t) => {
  const out = await tempDir(t);
  const result = await runWeir(['machines', 'export', '--out', out]);
  t.is(result.status, 0, result.stderr);
  const session = JSON.parse(await readFile(join(out, 'checkout-session.json'), 'utf8')) as {
    id: string;
    initial: string;
    states: Record<string, { on?: Record<string, unknown> }>;
  };
  t.is(session.id, 'checkoutSession');
  t.deepEqual(Object.keys(session.states).sort(), ['canceled', 'complete', 'expired', 'incomplete', 'new', 'open']);
  t.truthy(session.states.open?.on?.CheckoutSessionCompleted);
  const delivery = JSON.parse(await readFile(join(out, 'webhook-delivery.json'), 'utf8')) as {
    states: Record<string, unknown>;
  };
  t.deepEqual(Object.keys(delivery.states).sort(), ['canceled', 'exhausted', 'failed', 'pending', 'succeeded']);
});

test('weir replay rebuilds the read models from the log: a summary for a person by default, the report as JSON with --json', async (t) => {
  const dataDir = await tempDir(t);
  t.is((await runWeir(['org', 'create', '--name', 'A'], { WEIR_DATA_DIR: dataDir })).status, 0);
  t.is((await runWeir(['org', 'create', '--name', 'B'], { WEIR_DATA_DIR: dataDir })).status, 0);
  const read = await runWeir(['replay'], { WEIR_DATA_DIR: dataDir });
  t.is(read.status, 0, read.stderr);
  t.is(read.stdout, '', 'no JSON unless asked');
  t.regex(read.stderr, /^log: 8 events in \d+ streams, through position 8$/m);
  t.regex(read.stderr, /^events by type:\n {2}\S+ +\d+$/m);
  t.regex(read.stderr, /^read models: \d+ documents in \d+ of \d+ collections\n {2}\S+ +\d+$/m);
  t.regex(read.stderr, /^ {2}organizations +4$/m, 'each organization in test and live');
  t.regex(read.stderr, /^read store: embedded \(read-models\.sqlite3 in the data dir\)$/m);
  t.regex(read.stderr, /^OK: rebuilt in \d+\.\d s \([\d,]+ events\/s\)$/m);
  t.false(read.stderr.includes('{'), 'no JSON on stderr');
  // Piped, as here: a plain line first, no bar frames, no control characters.
  t.is(read.stderr.split('\n')[0], 'replay: rebuilding the read models from the log');
  t.notRegex(read.stderr, /[[\]%\r]|\n\n/);
  t.false(read.stderr.includes('\u001b'), 'no escape sequence');

  const result = await runWeir(['replay', '--json'], { WEIR_DATA_DIR: dataDir });
  t.is(result.status, 0, result.stderr);
  const summary = JSON.parse(result.stdout) as {
    events: number;
    eventsPerSecond: number;
    position: string;
    types: Record<string, number>;
    collections: Record<string, number>;
  };
  t.is(summary.events, 8);
  t.true(summary.eventsPerSecond > 0);
  t.is(summary.position, '8');
  t.is(
    Object.values(summary.types).reduce((a, b) => a + b, 0),
    8,
  );
  t.is(summary.collections['organizations'], 4);
  t.regex(result.stderr, /replay/);
  // Rebuilt into the data dir's read store, with the position, for the next weir serve to start from.
  const { createSqliteReadStore } = await import('../../src/read-store/sqlite-read-store.ts');
  const { READ_MODEL_INDEXES } = await import('../../src/projections/all-projections.ts');
  // With the fields weir opens it with (another layout would be emptied, to be rebuilt).
  const readModels = createSqliteReadStore({
    path: join(dataDir, 'read-models.sqlite3'),
    ...READ_MODEL_INDEXES,
  });
  try {
    t.is(await readModels.getCheckpoint('projections'), 8n);
    const organizations = await readModels.collection('organizations').find({});
    t.is(new Set(organizations.map((doc) => doc['organizationId'])).size, 2);
  } finally {
    await readModels.close();
  }
});

test('weir replay refuses the data dir of a running weir serve, whose read models it would rebuild underneath', async (t) => {
  const dataDir = await tempDir(t);
  const server = await spawnWeir({ dataDir });
  t.teardown(() => server.kill());
  const result = await runWeir(['replay'], { WEIR_DATA_DIR: dataDir });
  t.is(result.status, 1);
  t.regex(result.stderr, /another weir serve \(pid \d+\) is using the data dir/);
  // Another data dir would be another log: only stopping the server lets this one be replayed.
  t.regex(result.stderr, /stop it first: weir replay rebuilds the read models it serves/);
  t.notRegex(result.stderr, /--data-dir/);
});

test('weir backup beside a running weir serve copies what its SQLite files hold, -wal included: the copy verifies (chain and read models), replays to the same log, and keeps the keys', async (t) => {
  const dataDir = await tempDir(t);
  const server = await spawnWeir({ dataDir });
  t.teardown(() => server.kill());
  const created = await runWeir(['org', 'create', '--name', 'Backed Up'], { WEIR_DATA_DIR: dataDir });
  t.is(created.status, 0, created.stderr);
  const { testSecretKey } = JSON.parse(created.stdout) as { testSecretKey: string };
  // Written through the server: in its -wal until SQLite checkpoints it.
  const api = apiClient(server.url, testSecretKey);
  await eventually(async () => ((await api.get('/api/v1/organization')).status === 200 ? true : undefined), 'the key');
  const added = await api.post('/api/v1/webhook-endpoints', {
    description: 'shop',
    url: 'https://shop.example/hooks',
    enabledEvents: { events: ['*'] },
  });
  t.is(added.status, 200, JSON.stringify(added.body));
  const out = join(await tempDir(t), 'backup');
  const backup = await runWeir(['backup', '--out', out], { WEIR_DATA_DIR: dataDir });
  t.is(backup.status, 0, backup.stderr);
  t.regex(backup.stderr, /^ {2}events\.sqlite3 +SQLite online backup, \d+ bytes$/m);
  // The embedded bus's file too: chain messages not yet handled are in it.
  t.regex(backup.stderr, /^ {2}bus\.sqlite3 +SQLite online backup, \d+ bytes$/m);
  t.regex(backup.stderr, new RegExp(`^OK: \\d+ files; to start on it: weir serve --data-dir ${out}$`, 'm'));
  const inUse = await runWeir(['restore', '--from', out, '--data-dir', dataDir, '--force']);
  t.is(inUse.status, 1, inUse.stderr);
  t.regex(
    inUse.stderr,
    /^weir: another weir serve \(pid \d+\) is using the data dir .*weir restore replaces what it serves/,
  );
  await server.kill('SIGTERM');
  t.false(existsSync(join(out, 'serve.lock')), "the running server's lock is not copied");
  const restoredDir = join(await tempDir(t), 'restored');
  const restoredRun = await runWeir(['restore', '--from', out, '--data-dir', restoredDir]);
  t.is(restoredRun.status, 0, restoredRun.stderr);
  t.regex(restoredRun.stderr, new RegExp(`^OK: to start on it: weir serve --data-dir ${restoredDir}$`, 'm'));
  t.deepEqual(await readFile(join(out, 'master.key')), await readFile(join(dataDir, 'master.key')));

  const verified = await runWeir(['audit', 'verify', '--data-dir', out]);
  t.is(verified.status, 0, verified.stderr);
  t.regex(verified.stderr, /^read models: .*: match the rebuild$/m);
  // The backup checked itself; weir backup --verify checks it (or a restore of it) again, and finds a spoiled copy.
  // The read models as committed (SQLite read store: within a second of their writes), at or behind the log: a start catches up.
  const [, position, head] =
    /^verified: (?:bus\.sqlite3 integrity_check ok; )?events\.sqlite3 integrity_check ok, \d+ events .*; read-models\.sqlite3 integrity_check ok, read models at log position (\d+|none) of (\d+), \d+ organizations? all in the log$/m.exec(
      backup.stderr,
    ) ?? [];
  t.true(
    position !== undefined && (position === 'none' || BigInt(position) <= BigInt(head!)) && BigInt(head!) > 0n,
    backup.stderr,
  );
  const checked = await runWeir(['backup', '--verify', out]);
  t.is(checked.status, 0, checked.stderr);
  t.regex(checked.stderr, /^OK: every SQLite file is whole and the read models belong to the log/m);
  const spoiled = join(await tempDir(t), 'spoiled');
  await cp(out, spoiled, { recursive: true });
  await writeFile(join(spoiled, 'events.sqlite3'), 'not the log any more');
  const refused = await runWeir(['backup', '--verify', spoiled]);
  t.is(refused.status, 1, refused.stderr);
  t.regex(refused.stderr, /^ {2}events\.sqlite3: SQLite's integrity_check fails: file is not a database$/m);
  const replayOf = async (dir: string) => {
    const run = await runWeir(['replay', '--json', '--data-dir', dir]);
    t.is(run.status, 0, run.stderr);
    return JSON.parse(run.stdout) as { events: number; types: Record<string, number> };
  };
  const original = await replayOf(dataDir);
  const restored = await replayOf(out);
  t.is(restored.types['WebhookEndpointCreated'], 1, 'the write the server made is in the copy');
  // The original went on only to sign its head at the stop: every other event is in the copy.
  const { AuditCheckpointSigned: _o, ...originalTypes } = original.types;
  const { AuditCheckpointSigned: _r, ...restoredTypes } = restored.types;
  t.deepEqual(restoredTypes, originalTypes);
});

test('weir devnet starts a local chain with test tokens and the factory, prints its JSON, writes --out FILE, and runs until stopped', async (t) => {
  const { spawn } = await import('node:child_process');
  const { findFreePort } = await import('../support/free-port.ts');
  const { ROOT, killWithWhatItStarted, stopCleanly } = await import('../support/weir-process.ts');
  const { childCommands } = await import('../support/compiled-tree.ts');
  const dir = await tempDir(t);
  const out = join(dir, 'devnet.json');
  const port = await findFreePort();
  const child = spawn(process.execPath, [...childCommands().weir, 'devnet', '--port', String(port), '--out', out], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => killWithWhatItStarted(child));
  const { stdout, stderr } = collectOutput(child);
  const info = await eventually(
    async () => {
      try {
        return JSON.parse(stdout()) as {
          chainId: number;
          rpcUrl: string;
          contracts: Record<string, string>;
          accounts: { role: string }[];
        };
      } catch {
        return undefined;
      }
    },
    'the devnet JSON on stdout',
    // anvil, the token and factory deployments: seconds alone, far more on a loaded CI machine.
    150_000,
  );
  t.is(info.chainId, 31337);
  t.is(info.rpcUrl, `http://127.0.0.1:${port}`);
  t.deepEqual(Object.keys(info.contracts).sort(), ['dai', 'forwarderFactory', 'usdc', 'usdt']);
  t.true(info.accounts.some((a) => a.role === 'payer'));
  t.deepEqual(JSON.parse(await readFile(out, 'utf8')), info);
  t.is(await createJsonRpc(info.rpcUrl, { timeoutMs: 60_000 })('eth_chainId'), '0x7a69');
  // Logged as serve logs: pino JSON lines on stderr, each chain's with its event; stdout is the JSON alone.
  const running = await eventually(async () => {
    // Whole lines only: the last may still be arriving.
    const lines = stderr()
      .split('\n')
      .slice(0, -1)
      .filter((line) => line.startsWith('{'));
    const parsed = lines.map((line) => JSON.parse(line) as { event?: string; chain?: string; rpcUrl?: string });
    const found = parsed.filter((line) => line.event === 'devnet.running');
    return found.length === 3 ? found : undefined;
  }, 'the devnet.running lines on stderr');
  t.deepEqual(
    running.map((line) => line.chain),
    ['evm', 'solana', 'tron'],
  );
  t.is(running[0]!.rpcUrl, info.rpcUrl);
  t.is(await stopCleanly(child), 0, 'its anvil stopped with it');
});

test('weir serve reads the admin token and the master key from files (--admin-token-file, WEIR_MASTER_KEY_FILE): neither is in its command line or environment', async (t) => {
  const dir = await tempDir(t);
  const token = 'op-token-from-a-file-0123456789abcdef';
  const masterKey = Buffer.alloc(32, 9).toString('base64');
  await writeFile(join(dir, 'admin-token'), `${token}\n`, { mode: 0o600 });
  await writeFile(join(dir, 'master-key'), `${masterKey}\n`, { mode: 0o600 });
  const dataDir = join(dir, 'data');
  const server = await spawnWeir({
    dataDir,
    env: { WEIR_ADMIN_TOKEN: '', WEIR_ADMIN_TOKEN_FILE: join(dir, 'admin-token') },
    args: ['--master-key-file', join(dir, 'master-key')],
  });
  t.teardown(() => server.kill());
  const created = await apiClient(server.url, token).post<{ testSecretKey: string }>('/admin/organizations', {
    name: 'Filed Shop',
  });
  t.is(created.status, 200, JSON.stringify(created.body));
  // The webhook secret is sealed with the key from the file: no key file is made in the data dir.
  const endpoint = await apiClient(server.url, created.body.testSecretKey).post<{ secret: string }>(
    '/api/v1/webhook-endpoints',
    { description: 'orders', url: 'https://shop.example/hooks', enabledEvents: { events: ['*'] } },
  );
  t.is(endpoint.status, 200, JSON.stringify(endpoint.body));
  await t.throwsAsync(stat(join(dataDir, 'master.key')), { code: 'ENOENT' });
  const seen = await Promise.all(
    ['cmdline', 'environ'].map((file) => readFile(`/proc/${server.child.pid}/${file}`, 'utf8')),
  );
  for (const text of seen) {
    t.false(text.includes(token));
    t.false(text.includes(masterKey));
  }
});

test('weir serve with a secret given twice, or in an empty or missing file, refuses to start with a message naming the setting', async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, 'token'), 'op-token-s3cr3t\n');
  await writeFile(join(dir, 'empty'), '\n');
  const env = { WEIR_DATA_DIR: join(dir, 'data'), PORT: '0' };
  const twice = await runWeir(['serve', '--admin-token-file', join(dir, 'token')], {
    ...env,
    WEIR_ADMIN_TOKEN: 'other',
  });
  t.is(twice.status, 2);
  t.is(
    twice.stderr.trim(),
    'weir: WEIR_ADMIN_TOKEN (--admin-token) and WEIR_ADMIN_TOKEN_FILE (--admin-token-file) are both set; give the admin token once',
  );
  const empty = await runWeir(['serve'], { ...env, WEIR_MASTER_KEY_FILE: join(dir, 'empty') });
  t.is(empty.status, 2);
  t.is(empty.stderr.trim(), `weir: WEIR_MASTER_KEY_FILE (--master-key-file): ${join(dir, 'empty')} is empty`);
  const missing = await runWeir(['serve', '--admin-token-file', join(dir, 'nope')], env);
  t.is(missing.status, 2);
  t.is(
    missing.stderr.trim(),
    `weir: WEIR_ADMIN_TOKEN_FILE (--admin-token-file): cannot read ${join(dir, 'nope')} (ENOENT)`,
  );
  const notAKey = await runWeir(['serve', '--master-key-file', join(dir, 'token')], env);
  t.is(notAKey.status, 2);
  t.is(notAKey.stderr.trim(), 'weir: WEIR_MASTER_KEY_FILE (--master-key-file) must hold 32 bytes encoded in base64');
  // A guessable admin token: the file's 15 characters are refused before anything starts, never shown.
  const short = await runWeir(['serve', '--admin-token-file', join(dir, 'token')], env);
  t.is(short.status, 2);
  t.is(
    short.stderr.trim(),
    'weir: WEIR_ADMIN_TOKEN_FILE (--admin-token-file): the admin token must be at least 32 characters, got 15 (make one with openssl rand -hex 32; leave it unset to keep the admin API off)',
  );
  t.false(existsSync(join(dir, 'data')), 'nothing was started');
  for (const result of [twice, empty, missing, notAKey, short])
    t.false(`${result.stdout}${result.stderr}`.includes('s3cr3t'));
});

test('weir user create makes a dashboard user who can sign in; the password comes from standard input or WEIR_USER_PASSWORD, never the command line', async (t) => {
  const dataDir = await tempDir(t);
  const env = { WEIR_DATA_DIR: dataDir };
  const org = JSON.parse((await runWeir(['org', 'create', '--name', 'Quay Books'], env)).stdout) as {
    organizationId: string;
  };
  // Started before any user exists: it prints the first-run link, and takes users made while it runs.
  const server = await spawnWeir({ dataDir });
  t.teardown(() => server.kill());
  // The log names the token's file (its owner's alone), never the token.
  const tokenFile = join(dataDir, 'dashboard-setup-token');
  t.true(
    server
      .output()
      .includes(
        `no dashboard user yet: open ${server.url}/dashboard/setup and enter the one-time setup token in ${tokenFile} to create the first owner`,
      ),
  );
  const setupToken = (await readFile(tokenFile, 'utf8')).trim();
  t.regex(setupToken, /^[A-Za-z0-9_-]{32}$/);
  t.is((await stat(tokenFile)).mode & 0o777, 0o600);
  t.false(server.output().includes(setupToken));
  const user = (email: string, role: string, input?: string, extra: Record<string, string> = {}) =>
    runWeir(
      [
        'user',
        'create',
        '--org',
        org.organizationId,
        '--email',
        email,
        '--role',
        role,
        ...(input ? ['--password-stdin'] : []),
      ],
      { ...env, ...extra },
      input,
    );
  const none = await user('ada@quay.example', 'owner');
  t.is(none.status, 2);
  t.regex(none.stderr, /user create needs a password: --password-stdin .*WEIR_USER_PASSWORD/);
  const created = await user('ada@quay.example', 'owner', 'correct horse battery\n');
  t.is(created.status, 0, created.stderr);
  t.like(JSON.parse(created.stdout), { organizationId: org.organizationId, email: 'ada@quay.example', role: 'owner' });
  t.regex(
    (await user('Ada@Quay.example', 'viewer', 'another long password')).stderr,
    /email: Ada@Quay.example is already a user's/,
  );
  t.regex(
    (await user('bo@quay.example', 'boss', 'another long password')).stderr,
    /role: must be one of owner, admin, developer, viewer/,
  );
  t.regex((await user('bo@quay.example', 'viewer', 'short')).stderr, /password: must be at least 10 characters/);
  t.is((await user('bo@quay.example', 'viewer', undefined, { WEIR_USER_PASSWORD: 'viewer password 1' })).status, 0);

  // With a user, the first-run page is closed and the token's file goes.
  t.is((await fetch(`${server.url}/dashboard/setup`)).status, 404);
  await t.throwsAsync(stat(tokenFile), { code: 'ENOENT' });

  // A server gone meanwhile says why in its output.
  const login = await fetch(`${server.url}/dashboard/login`).catch((error: unknown) => {
    throw new Error(`GET /dashboard/login failed (${failure(error)}); the server printed:\n${server.output()}`);
  });
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await login.text())![1]!;
  const signIn = await fetch(`${server.url}/dashboard/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, email: 'ada@quay.example', password: 'correct horse battery' }),
  }).catch((error: unknown) => {
    throw new Error(`POST /dashboard/login failed (${failure(error)}); the server printed:\n${server.output()}`);
  });
  t.is(signIn.status, 303, 'the user made by the CLI while the server runs signs in at once');
  t.regex(
    signIn.headers.get('set-cookie') ?? '',
    /^weir_session=[0-9a-f-]{36}\.[A-Za-z0-9_-]{43}; Path=\/dashboard; HttpOnly; SameSite=Strict$/,
  );
});

test('weir audit checkpoint signs and prints the head; weir audit verify exits 0 on the log as written and 1, naming the position, once a row is edited', async (t) => {
  const dataDir = await tempDir(t);
  t.is((await runWeir(['org', 'create', '--name', 'Audited'], { WEIR_DATA_DIR: dataDir })).status, 0);
  t.is((await runWeir(['audit', 'checkpoint'], { WEIR_DATA_DIR: dataDir })).status, 1, 'no checkpoint yet');
  const signed = await runWeir(['audit', 'checkpoint', '--write'], { WEIR_DATA_DIR: dataDir });
  t.is(signed.status, 0, signed.stderr);
  const checkpoint = JSON.parse(signed.stdout) as { position: string; hash: string; publicKey: string };
  t.regex(checkpoint.hash, /^[0-9a-f]{64}$/);
  const published = join(dataDir, 'published-checkpoint.json');
  await writeFile(published, signed.stdout);

  const verified = await runWeir(['audit', 'verify', '--json', '--checkpoint', published], { WEIR_DATA_DIR: dataDir });
  t.is(verified.status, 0, verified.stderr);
  t.regex(verified.stderr, /OK: everything checked holds/);
  // Which checkpoints the auditor gave, which the log holds, and the key they were checked against.
  t.true(
    verified.stderr.includes(
      `checkpoints: 2 checked, latest for position ${checkpoint.position}\n  1 found in the log\n  1 from --checkpoint ${published} (for position ${checkpoint.position})\n`,
    ),
    verified.stderr,
  );
  t.true(
    verified.stderr.includes(
      `operator key: checkpoints are checked against ${checkpoint.publicKey}, the key in ${join(dataDir, 'audit-operator.key')}, the data dir's own`,
    ),
    verified.stderr,
  );
  const report = JSON.parse(verified.stdout) as { holds: boolean; chain: { checkpoints: { checked: number } } };
  t.true(report.holds);
  t.is(report.chain.checkpoints.checked, 2, 'the logged checkpoint and the published copy');

  const { default: Database } = await import('better-sqlite3');
  const db = new Database(join(dataDir, 'events.sqlite3'));
  db.prepare("UPDATE events SET data = json_set(data, '$.name', 'Someone else') WHERE position = 1").run();
  db.close();
  const tampered = await runWeir(['audit', 'verify', '--json'], { WEIR_DATA_DIR: dataDir });
  t.is(tampered.status, 1);
  t.regex(tampered.stderr, /content_changed at 1: /);
  t.regex(tampered.stderr, /FAILED/);
  const found = JSON.parse(tampered.stdout) as { chain: { firstProblem: { kind: string; position: string } } };
  t.deepEqual(found.chain.firstProblem.kind, 'content_changed');
  t.is(found.chain.firstProblem.position, '1');
});

test("weir audit verify --public-key trusts that key alone: a checkpoint signed with a key put in the data dir's place fails; without it the data dir's key is named. A --write with nothing new says so", async (t) => {
  const dataDir = await tempDir(t);
  const env = { WEIR_DATA_DIR: dataDir };
  t.is((await runWeir(['org', 'create', '--name', 'Pinned'], env)).status, 0);
  const signed = await runWeir(['audit', 'checkpoint', '--write'], env);
  t.is(signed.status, 0, signed.stderr);
  const original = JSON.parse(signed.stdout) as { position: string; loggedAt: string; publicKey: string };
  t.is(signed.stderr, '');
  const again = await runWeir(['audit', 'checkpoint', '--write'], env);
  t.is(again.status, 0, again.stderr);
  t.is(
    again.stderr.trim(),
    `weir audit checkpoint: nothing new since the checkpoint of position ${original.position} (logged at ${original.loggedAt}): no checkpoint written`,
  );
  t.deepEqual(JSON.parse(again.stdout), original, 'the latest is still printed');

  const trusting = await runWeir(['audit', 'verify'], env);
  t.is(trusting.status, 0, trusting.stderr);
  t.true(
    trusting.stderr.includes(
      `checkpoints are checked against ${original.publicKey}, the key in ${join(dataDir, 'audit-operator.key')}, the data dir's own`,
    ),
    trusting.stderr,
  );

  // Someone with the data dir swaps the key, appends and re-signs.
  const { generateKeyPairSync } = await import('node:crypto');
  const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  await writeFile(join(dataDir, 'audit-operator.key'), pem, { mode: 0o600 });
  t.is((await runWeir(['org', 'create', '--name', 'Intruder'], env)).status, 0);
  const forged = await runWeir(['audit', 'checkpoint', '--write'], env);
  t.is(forged.status, 0, forged.stderr);
  const forgedKey = (JSON.parse(forged.stdout) as { publicKey: string }).publicKey;
  t.not(forgedKey, original.publicKey);

  const pinned = await runWeir(['audit', 'verify', '--public-key', original.publicKey], env);
  t.is(pinned.status, 1, pinned.stderr);
  t.regex(pinned.stderr, /checkpoint_forged at \d+: /);
  t.notRegex(pinned.stderr, /checkpoints are checked against/);
  t.true(pinned.stderr.includes(`\noperator key: ${original.publicKey}, given with --public-key\n`), pinned.stderr);
  const unpinned = await runWeir(['audit', 'verify'], env);
  t.true(unpinned.stderr.includes(`checkpoints are checked against ${forgedKey}`), unpinned.stderr);

  // A trailing --public-key (its value lost to a shell variable left empty) trusts nothing in its place.
  const valueless = await runWeir(['audit', 'verify', '--public-key'], env);
  t.is(valueless.status, 2, valueless.stderr);
  t.is(valueless.stderr.trim(), 'weir: --public-key needs a value');
});

test("weir audit verify compares the data dir's read models with a rebuild: they match as written, an edited document is named", async (t) => {
  const dataDir = await tempDir(t);
  t.is((await runWeir(['org', 'create', '--name', 'Audited models'], { WEIR_DATA_DIR: dataDir })).status, 0);
  const before = await runWeir(['audit', 'verify', '--json'], { WEIR_DATA_DIR: dataDir });
  t.regex(before.stderr, /read models: not compared \(no read models in /);
  t.is((await runWeir(['replay'], { WEIR_DATA_DIR: dataDir })).status, 0);

  const verified = await runWeir(['audit', 'verify', '--json'], { WEIR_DATA_DIR: dataDir });
  t.is(verified.status, 0, verified.stderr);
  const report = JSON.parse(verified.stdout) as { readModels: { compared: boolean; documents: number } };
  t.true(report.readModels.compared);
  t.true(report.readModels.documents > 0);

  const { default: Database } = await import('better-sqlite3');
  const db = new Database(join(dataDir, 'read-models.sqlite3'));
  const edited = db
    .prepare(
      "UPDATE documents SET body = json_set(body, '$.name', 'Someone else') WHERE json_extract(body, '$.name') = 'Audited models'",
    )
    .run();
  db.close();
  t.true(edited.changes > 0);
  const tampered = await runWeir(['audit', 'verify', '--json'], { WEIR_DATA_DIR: dataDir });
  t.is(tampered.status, 1);
  // The organization's test and live documents.
  t.regex(tampered.stderr, /read models: .* 2 difference\(s\)/);
  t.regex(tampered.stderr, /: different \(name\)/);

  // An indexed column edited, its body left alone: queries by the organization miss the key.
  const copy = await tempDir(t);
  t.is((await runWeir(['org', 'create', '--name', 'Indexed'], { WEIR_DATA_DIR: copy })).status, 0);
  t.is((await runWeir(['replay'], { WEIR_DATA_DIR: copy })).status, 0);
  const columns = new Database(join(copy, 'read-models.sqlite3'));
  const key = columns
    .prepare("SELECT id FROM documents WHERE collection = 'api_keys' AND json_extract(body, '$.environment') = 'test'")
    .pluck()
    .get() as string;
  const organizationColumn = `k${INDEXED_FIELDS.indexOf('organizationId')}`;
  columns
    .prepare(`UPDATE documents SET ${organizationColumn} = 'org_someone_else' WHERE collection = 'api_keys' AND id = ?`)
    .run(key);
  columns.close();
  const misindexed = await runWeir(['audit', 'verify', '--json'], { WEIR_DATA_DIR: copy });
  t.is(misindexed.status, 1, misindexed.stderr);
  t.regex(misindexed.stderr, /read models: .* 1 difference\(s\)/);
  t.true(misindexed.stderr.includes(`api_keys/${key}: misindexed (organizationId)`), misindexed.stderr);
});

test('weir audit verify reads the data dir without writing it: a wrong --data-dir is an error (not an empty log that holds), modes stay, read models of another layout are not dropped', async (t) => {
  const missing = join(await tempDir(t), 'typo');
  const nowhere = await runWeir(['audit', 'verify'], { WEIR_DATA_DIR: missing });
  t.is(nowhere.status, 2, 'a usage error, not "OK" over an empty log');
  t.regex(nowhere.stderr, /no event log at .*typo\/events\.sqlite3: check --data-dir/);
  t.notRegex(nowhere.stderr, /OK: everything checked holds/);
  await t.throwsAsync(stat(missing), { code: 'ENOENT' }, 'no data dir was created');

  const dataDir = await tempDir(t);
  t.is((await runWeir(['org', 'create', '--name', 'Copied'], { WEIR_DATA_DIR: dataDir })).status, 0);
  t.is((await runWeir(['replay'], { WEIR_DATA_DIR: dataDir })).status, 0);
  // An auditor's copy: readable by the group, which weir serve would take away.
  const { chmod } = await import('node:fs/promises');
  await chmod(join(dataDir, 'events.sqlite3'), 0o444);
  await chmod(dataDir, 0o755);
  const { default: Database } = await import('better-sqlite3');
  const models = new Database(join(dataDir, 'read-models.sqlite3'));
  models.prepare("UPDATE layout SET description = 'an older layout'").run();
  models.close();

  const verified = await runWeir(['audit', 'verify'], { WEIR_DATA_DIR: dataDir });
  t.is(verified.status, 0, verified.stderr);
  t.regex(verified.stderr, /read models: not compared \(.* in another layout than this version's/);
  t.is((await stat(dataDir)).mode & 0o777, 0o755, 'the directory keeps its mode');
  t.is((await stat(join(dataDir, 'events.sqlite3'))).mode & 0o777, 0o444, 'the log keeps its mode');
  const after = new Database(join(dataDir, 'read-models.sqlite3'), { readonly: true });
  t.true(
    (after.prepare('SELECT count(*) FROM documents').pluck().get() as number) > 0,
    'the live read models are still there',
  );
  after.close();
});

test('weir audit verify into a piped stderr (a CI log) prints no progress bars: at most a plain line per phase, no redrawn 0% and 100% frames', async (t) => {
  const dataDir = await tempDir(t);
  t.is((await runWeir(['org', 'create', '--name', 'Piped'], { WEIR_DATA_DIR: dataDir })).status, 0);
  t.is((await runWeir(['replay'], { WEIR_DATA_DIR: dataDir })).status, 0);
  const verified = await runWeir(['audit', 'verify'], { WEIR_DATA_DIR: dataDir });
  t.is(verified.status, 0, verified.stderr);
  t.regex(verified.stderr, /OK: everything checked holds/);
  // No bar, no percentage, no escape or carriage return, no blank line a stopped bar leaves.
  t.notRegex(verified.stderr, /[[\]%\r]|={3,}|-{3,}|\n\n/);
  t.false(verified.stderr.includes('\u001b'), 'no escape sequence');
  const phases = verified.stderr.split('\n').filter((line) => line.startsWith('audit verify: '));
  t.deepEqual(phases, [
    'audit verify: hash chain',
    'audit verify: rebuilding read models',
    'audit verify: comparing read models',
  ]);
});

test('weir audit export --org writes a bundle of one organization that weir audit verify --bundle checks offline: exit 0 as written, 1 once an event is edited', async (t) => {
  const dataDir = await tempDir(t);
  const orgIdOf = (stdout: string) => (JSON.parse(stdout) as { organizationId: string }).organizationId;
  const own = orgIdOf((await runWeir(['org', 'create', '--name', 'Audited'], { WEIR_DATA_DIR: dataDir })).stdout);
  const other = orgIdOf(
    (await runWeir(['org', 'create', '--name', 'Someone Else'], { WEIR_DATA_DIR: dataDir })).stdout,
  );
  const signed = await runWeir(['audit', 'checkpoint', '--write'], { WEIR_DATA_DIR: dataDir });
  t.is(signed.status, 0, signed.stderr);
  const publicKey = (JSON.parse(signed.stdout) as { publicKey: string }).publicKey;
  const bundle = join(dataDir, 'bundle.ndjson');
  const exported = await runWeir(['audit', 'export', '--org', own, '--out', bundle], { WEIR_DATA_DIR: dataDir });
  t.is(exported.status, 0, exported.stderr);
  t.regex(
    exported.stderr,
    /^weir audit export: \d+ events of \S+ and 1 checkpoint in full, \d+ other events as links only, in /m,
  );
  const text = await readFile(bundle, 'utf8');
  t.true(text.includes(own));
  t.false(text.includes(other), "nothing of the other organization's");
  t.false(text.includes('Someone Else'));

  const unknown = await runWeir(['audit', 'export', '--org', 'org_nobody', '--out', join(dataDir, 'none.ndjson')], {
    WEIR_DATA_DIR: dataDir,
  });
  t.is(unknown.status, 2, 'a wrong --org is a usage error');
  t.regex(unknown.stderr, /the log holds no event of org_nobody: check --org/);

  // Offline: another directory, no data dir of its own, the operator's key given.
  const elsewhere = await tempDir(t);
  const verified = await runWeir(['audit', 'verify', '--bundle', bundle, '--public-key', publicKey, '--json'], {
    WEIR_DATA_DIR: elsewhere,
  });
  t.is(verified.status, 0, verified.stderr);
  t.regex(verified.stderr, /OK: the bundle holds/);
  t.true(
    verified.stderr.includes(
      `operator key: ${publicKey}, given with --public-key\ncheckpoints: 1 checked, latest for position `,
    ),
    verified.stderr,
  );
  t.regex(verified.stderr, /^ {2}1 found in the bundle\n {2}none given with --checkpoint: /m);
  // Without --public-key the summary says the key trusted is the one the bundle names.
  const unpinned = await runWeir(['audit', 'verify', '--bundle', bundle], { WEIR_DATA_DIR: elsewhere });
  t.is(unpinned.status, 0, unpinned.stderr);
  t.true(
    unpinned.stderr.includes(
      `operator key: no --public-key: checkpoints are checked against ${publicKey}, the key the bundle names`,
    ),
    unpinned.stderr,
  );

  await writeFile(bundle, text.replace('"Audited', '"Audit3d'));
  const tampered = await runWeir(['audit', 'verify', '--bundle', bundle, '--public-key', publicKey], {
    WEIR_DATA_DIR: elsewhere,
  });
  t.is(tampered.status, 1);
  t.regex(tampered.stderr, /content_changed at 1: /);
});
