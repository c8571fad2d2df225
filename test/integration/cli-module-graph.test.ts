import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REPOSITORY_ROOT } from '../support/compiled-tree.ts';
import { collectOutput } from '../support/weir-process.ts';

const ROOT = REPOSITORY_ROOT;
const RECORDER = fileURLToPath(new URL('../support/loaded-modules.mjs', import.meta.url));

/** A loaded file's path inside the repository; node_modules may be a link to another checkout's. */
const inRepository = (path: string) => {
  const packages = path.indexOf('/node_modules/');
  return packages >= 0 ? path.slice(packages + 1) : relative(ROOT, path);
};

/** The modules `weir …args` loads (paths inside the repository), and how it exited. */
async function modulesOf(args: string[], dataDir: string) {
  const list = join(dataDir, '..', `${Date.now()}-modules.txt`);
  const child = spawn(process.execPath, ['--import', RECORDER, 'bin/weir.js', ...args], {
    cwd: ROOT,
    env: { ...process.env, WEIR_LOADED_MODULES: list, WEIR_DATA_DIR: dataDir },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const output = collectOutput(child);
  const status = await new Promise<number | null>((resolve) => child.once('close', resolve));
  const stderr = output.stderr();
  const loaded = (await readFile(list, 'utf8'))
    .trim()
    .split('\n')
    .map((url) => inRepository(fileURLToPath(url)));
  await rm(list, { force: true });
  return { status, stderr, loaded };
}

// Each command costs what it loads: through tsx, the whole server (koa, the chains, the dashboard)
// was 4,000 modules and 7 s of CPU for `weir org create`, which only appends to the log.
test('weir org create, weir replay and weir audit verify load the log and the read models, not the server', async (t) => {
  const parent = await mkdtemp(join(tmpdir(), 'weir-modules-'));
  t.teardown(() => rm(parent, { recursive: true, force: true }));
  const dataDir = join(parent, 'data');
  const server = ['src/app/start-weir.ts', 'src/read-api/app.ts', 'src/dashboard/app.tsx'];
  const packages = ['node_modules/koa/', 'node_modules/viem/_esm/chains/', 'node_modules/@solana/kit/'];

  const created = await modulesOf(['org', 'create', '--name', 'Module Count Shop'], dataDir);
  t.is(created.status, 0, created.stderr);
  t.true(
    created.loaded.includes('src/event-store/open-event-store.ts'),
    'the recorder saw the command load its modules',
  );
  for (const path of [...server, 'src/projections/all-projections.ts', 'node_modules/mingo/'])
    t.false(
      created.loaded.some((loaded) => loaded.startsWith(path)),
      `weir org create loads ${path}`,
    );
  for (const path of packages)
    t.false(
      created.loaded.some((loaded) => loaded.startsWith(path)),
      `weir org create loads ${path}`,
    );

  const replayed = await modulesOf(['replay'], dataDir);
  t.is(replayed.status, 0, replayed.stderr);
  t.true(replayed.loaded.includes('src/projections/all-projections.ts'));
  for (const path of [...server, ...packages])
    t.false(
      replayed.loaded.some((loaded) => loaded.startsWith(path)),
      `weir replay loads ${path}`,
    );
  // The viem root re-exports all of viem (340 modules, loaded for one getAddress); viem/utils is 163.
  const viem = replayed.loaded.filter((loaded) => loaded.startsWith('node_modules/viem/')).length;
  t.true(viem <= 170, `weir replay loads ${viem} viem modules`);
  // zod (95 modules) is the audit bundle's, not replay's.
  t.false(
    replayed.loaded.some((loaded) => loaded.startsWith('node_modules/zod/')),
    'weir replay loads node_modules/zod/',
  );

  // Nor is it a verify's of the log: only a bundle (--bundle, audit export) is read or written through it.
  const verified = await modulesOf(['audit', 'verify'], dataDir);
  t.is(verified.status, 0, verified.stderr);
  t.true(verified.loaded.includes('src/audit/audit-verify.ts'));
  t.false(
    verified.loaded.some((loaded) => loaded.startsWith('node_modules/zod/')),
    'weir audit verify loads node_modules/zod/',
  );
});
