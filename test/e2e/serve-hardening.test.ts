import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { createCustomer } from '../api/helpers.ts';
import { eventually } from '../support/api-client.ts';
import { startTestDevnet } from '../support/evm-devnet.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { createMerchant } from '../support/weir-harness.ts';
import { runWeir, spawnWeir } from '../support/weir-process.ts';

// The umask of an operator's usual shell, passed on to the weir processes started here: without
// Weir's own care, what they create would be readable by every user.
process.umask(0o022);

const tempDir = async (t: ExecutionContext) => {
  const dir = await mkdtemp(join(tmpdir(), 'weir-serve-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
};

test('MaxListenersExceededWarning: weir serve with more than ten webhook deliveries in flight writes no listener warning', async (t) => {
  // A receiver that never answers keeps every delivery in flight until its timeout.
  const receiver = await startWebhookReceiver(() => 'hang');
  t.teardown(() => receiver.close());
  const server = await spawnWeir({ dataDir: await tempDir(t), testRail: true });
  t.teardown(() => server.kill());
  const { api } = await createMerchant(server.url);
  const endpoints = await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      api.post<{ id: string }>('/api/v1/webhook-endpoints', {
        description: `slow ${i}`,
        url: receiver.url,
        enabledEvents: { events: ['*'] },
      }),
    ),
  );
  for (const endpoint of endpoints) {
    t.is(endpoint.status, 200, JSON.stringify(endpoint.body));
    t.is((await api.post(`/api/v1/webhook-endpoints/${endpoint.body.id}/test`)).status, 200);
  }
  await receiver.waitFor((all) => all.length >= 12);
  for (let i = 0; i < 3; i++) t.is((await fetch(`${server.url}/health`)).status, 200);
  // Stopped and its output read to the end, so a warning written at any time is in it.
  await server.kill('SIGTERM');
  t.is(server.child.exitCode, 0, server.output());
  t.notRegex(server.output(), /MaxListenersExceededWarning|memory leak detected/);
});

/** Every file and folder under `dir` (itself included) with its permission bits, by path inside it. */
async function modesUnder(dir: string): Promise<Map<string, number>> {
  const modes = new Map<string, number>();
  const visit = async (path: string) => {
    const stats = await lstat(path);
    modes.set(relative(dir, path) || '.', stats.mode & 0o777);
    if (stats.isDirectory()) for (const entry of await readdir(path)) await visit(join(path, entry));
  };
  await visit(dir);
  return modes;
}

test('Data files created 0600 in a 0700 data dir: after a weir serve start that wrote its log, key, lock, a mail and a chain checkpoint, every file is 0600 and every folder 0700', async (t) => {
  const devnet = await startTestDevnet(t);
  const dataDir = join(await tempDir(t), 'data');
  const server = await spawnWeir({ dataDir, env: { WEIR_DEVNET_FILE: devnet.file }, testRail: true });
  t.teardown(() => server.kill());
  const { api } = await createMerchant(server.url);
  const customerId = await createCustomer(api, 'payer@example.com');
  const invoice = await api.post<{ id: string }>('/api/v1/invoices', {
    customerId,
    lineItems: { data: [{ priceData: { currency: 'usdc', unitAmount: '100000000', productData: { name: 'Hour' } } }] },
  });
  t.is(invoice.status, 200, JSON.stringify(invoice.body));
  t.is((await api.post(`/api/v1/invoices/${invoice.body.id}/send`, {})).status, 200);
  const modes = await eventually(async () => {
    const now = await modesUnder(dataDir);
    const names = [...now.keys()];
    return names.some((n) => n.startsWith('outbox/')) && names.some((n) => n.startsWith('ingest/')) ? now : undefined;
  }, 'a mail in the outbox and a chain checkpoint');
  for (const name of ['events.sqlite3', 'events.sqlite3-wal', 'events.sqlite3-shm', 'master.key', 'serve.lock'])
    t.true(modes.has(name), name);
  for (const [name, mode] of modes) {
    const isDir = (await lstat(join(dataDir, name))).isDirectory();
    t.is(mode.toString(8), isDir ? '700' : '600', name);
  }
});

test('weir serve on an existing data dir made readable to others takes that access away and says what it changed', async (t) => {
  const dataDir = join(await tempDir(t), 'data');
  await mkdir(join(dataDir, 'outbox'), { recursive: true, mode: 0o755 });
  await chmod(dataDir, 0o755);
  await writeFile(join(dataDir, 'outbox', 'old.eml'), 'Subject: old\r\n\r\nold', { mode: 0o644 });
  const server = await spawnWeir({ dataDir });
  t.teardown(() => server.kill());
  t.true(
    server
      .output()
      .includes(
        `data dir ${dataDir}: took group and other access away from 3 entries: . 0755 → 0700, outbox 0755 → 0700, outbox/old.eml 0644 → 0600`,
      ),
    server.output(),
  );
  for (const [name, mode] of await modesUnder(dataDir))
    t.is(mode.toString(8), name === '.' || name === 'outbox' ? '700' : '600', name);
});

test('one weir serve per data dir: a second refuses to start (exit 1) with a message naming the first one’s pid; weir org create still works beside the first', async (t) => {
  const dataDir = await tempDir(t);
  const first = await spawnWeir({ dataDir });
  t.teardown(() => first.kill());
  t.is(await readFile(join(dataDir, 'serve.lock'), 'utf8'), `${first.child.pid}\n`);
  const second = await runWeir(['serve'], { WEIR_DATA_DIR: dataDir, PORT: '0', WEIR_LOCAL_CHAIN: 'off' });
  t.is(second.status, 1, second.stderr);
  t.is(
    second.stderr.trim(),
    `weir: another weir serve (pid ${first.child.pid}) is using the data dir ${dataDir}; stop it first, or give this one its own --data-dir (lock file ${join(dataDir, 'serve.lock')})`,
  );
  t.is((await fetch(`${first.url}/health`)).status, 200, 'the first goes on');
  t.is(await readFile(join(dataDir, 'serve.lock'), 'utf8'), `${first.child.pid}\n`);
  t.is((await runWeir(['org', 'create', '--name', 'Beside'], { WEIR_DATA_DIR: dataDir })).status, 0);
});

test('one weir serve per data dir: a lock left by a weir serve killed with -9 is taken over, logged, and removed at a clean stop', async (t) => {
  const dataDir = await tempDir(t);
  const first = await spawnWeir({ dataDir });
  t.teardown(() => first.kill());
  const firstPid = first.child.pid!;
  await first.kill('SIGKILL');
  t.is(await readFile(join(dataDir, 'serve.lock'), 'utf8'), `${firstPid}\n`, 'kill -9 leaves the lock');
  const second = await spawnWeir({ dataDir });
  t.teardown(() => second.kill());
  t.true(
    second
      .output()
      .includes(`data dir ${dataDir}: taking over the lock of weir serve pid ${firstPid}, which is no longer running`),
    second.output(),
  );
  t.is(await readFile(join(dataDir, 'serve.lock'), 'utf8'), `${second.child.pid}\n`);
  await second.kill('SIGTERM');
  t.is(second.child.exitCode, 0, second.output());
  await t.throwsAsync(stat(join(dataDir, 'serve.lock')), { code: 'ENOENT' });
});

test('weir serve started by bin/weir.js from another folder (as a service manager runs it) renders the dashboard: tsx reads Weir’s tsconfig, with its JSX runtime, not one in the working directory', async (t) => {
  const folder = await tempDir(t);
  const server = await spawnWeir({ dataDir: join(folder, 'data'), startedFrom: folder });
  t.teardown(() => server.kill());
  const login = await fetch(`${server.url}/dashboard/login`);
  t.is(login.status, 200, server.output());
  t.regex(await login.text(), /<form[^>]* method="post"/i);
});
