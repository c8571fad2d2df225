/**
 * Builds the compiled tree `npm test` runs (see compiled-tree.ts), unless the one there was built
 * from the sources as they are. Types are not checked here: `npm test` runs tsc for that first.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  COMPILED,
  currentBuild,
  HASH_FILE,
  REPOSITORY_ROOT,
  sourcesHash,
  treeFolder,
  treeParent,
} from './compiled-tree.ts';

const root = REPOSITORY_ROOT;
const hash = sourcesHash(root);
if (currentBuild(root, hash)) {
  console.log(`compiled tree: up to date (${hash})`);
} else {
  const startedAt = Date.now();
  mkdirSync(treeParent(root), { recursive: true });
  // Built aside and renamed into place, so the tree is always a whole build.
  const building = join(treeParent(root), `building-${process.pid}`);
  rmSync(building, { recursive: true, force: true });
  // The sources whole (data files, and the .ts files tests read or run through tsx), the JavaScript beside them.
  for (const folder of COMPILED) cpSync(join(root, folder), join(building, folder), { recursive: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const config = fileURLToPath(new URL('./tsconfig.compiled-tree.json', import.meta.url));
  const run = spawnSync(process.execPath, [tsc, '-p', config, '--outDir', building], { cwd: root, encoding: 'utf8' });
  if (run.status !== 0) {
    rmSync(building, { recursive: true, force: true });
    throw new Error(`tsc could not compile the tree (status ${run.status}):\n${run.stdout}${run.stderr}`);
  }
  const skipped = new Set([...COMPILED, '.git', 'node_modules', basename(treeParent(root))]);
  for (const entry of readdirSync(root).filter((name) => !skipped.has(name)))
    symlinkSync(join(root, entry), join(building, entry));
  writeFileSync(join(building, HASH_FILE), hash);
  if (existsSync(treeFolder(root))) rmSync(treeFolder(root), { recursive: true, force: true });
  renameSync(building, treeFolder(root));
  console.log(`compiled tree built in ${Date.now() - startedAt} ms (${hash})`);
}
