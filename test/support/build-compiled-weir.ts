/**
 * Compiles the server (and the test rail's entry) to JavaScript for the tests' child Weirs, once
 * per version of the sources: see compiled-weir.ts. Run by `npm test` before ava; nothing to do
 * when the build of today's sources exists. Types are not checked here (`npm test` runs tsc for that).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildsFolder, sourcesHash } from './compiled-weir.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const hash = sourcesHash(root);
const folder = join(buildsFolder(root), hash);

if (existsSync(folder)) {
  console.log(`compiled Weir for the tests' child processes: up to date (${hash})`);
} else {
  const startedAt = Date.now();
  mkdirSync(buildsFolder(root), { recursive: true });
  // Built aside and renamed into place, so a folder named for a hash is always a whole build.
  const building = join(buildsFolder(root), `.building-${process.pid}`);
  rmSync(building, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const config = fileURLToPath(new URL('./tsconfig.compiled-weir.json', import.meta.url));
  const run = spawnSync(process.execPath, [tsc, '-p', config, '--outDir', building], { cwd: root, encoding: 'utf8' });
  if (run.status !== 0) {
    rmSync(building, { recursive: true, force: true });
    throw new Error(`tsc could not compile Weir for the tests (status ${run.status}):\n${run.stdout}${run.stderr}`);
  }
  // What the modules read beside themselves (assets, the inspector's page script, fixtures) and the version.
  cpSync(join(root, 'src'), join(building, 'src'), {
    recursive: true,
    filter: (source) => !/\.tsx?$/.test(source),
  });
  copyFileSync(join(root, 'package.json'), join(building, 'package.json'));
  for (const stale of readdirSync(buildsFolder(root)).filter((name) => join(buildsFolder(root), name) !== building))
    rmSync(join(buildsFolder(root), stale), { recursive: true, force: true });
  renameSync(building, folder);
  console.log(`compiled Weir for the tests' child processes in ${Date.now() - startedAt} ms (${hash})`);
}
