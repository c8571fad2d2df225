import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childCommands, currentBuild, HASH_FILE, REPOSITORY_ROOT, sourcesHash, treeFolder } from './compiled-tree.ts';
import { WEIR_BIN } from './weir-process.ts';

/** A repository-shaped folder with a few sources, removed when the test ends. */
function fakeRoot(t: { teardown: (fn: () => void) => void }) {
  const root = mkdtempSync(join(tmpdir(), 'weir-compiled-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  write('package.json', '{"name":"weir"}');
  write('src/cli/main.ts', 'export {};');
  write('src/hosted/assets/checkout.js', '// page script');
  write('machines/session.ts', 'export const a = 1;');
  write('test/e2e/cli.test.ts', 'test();');
  return { root, write, built: () => write(join('.weir-compiled/tree', HASH_FILE), sourcesHash(root)) };
}

test('the tree counts only for the sources it was built from: an edited, added or renamed source or test means none (never run stale)', (t) => {
  const { root, write, built } = fakeRoot(t);
  t.is(currentBuild(root), null, 'nothing built yet');
  const hash = sourcesHash(root);
  t.is(sourcesHash(root), hash, 'the same sources, the same hash');
  built();
  t.is(currentBuild(root), treeFolder(root));

  write('machines/session.ts', 'export const a = 2;');
  t.not(sourcesHash(root), hash);
  t.is(currentBuild(root), null, 'a source edited after the build');
  write('machines/session.ts', 'export const a = 1;');
  t.is(currentBuild(root), treeFolder(root), 'back as built');

  write('test/e2e/cli.test.ts', 'test.serial();');
  t.is(currentBuild(root), null, 'a test edited after the build');
  write('test/e2e/cli.test.ts', 'test();');
  write('src/hosted/assets/wallet.css', 'body {}');
  t.is(currentBuild(root), null, 'an asset added after the build');
  rmSync(join(root, 'src/hosted/assets/wallet.css'));
  rmSync(join(root, 'machines/session.ts'));
  write('machines/sessions.ts', 'export const a = 1;');
  t.is(currentBuild(root), null, 'a source renamed after the build');
});

test('what is not compiled (README, the tree itself) does not change the hash', (t) => {
  const { root, write } = fakeRoot(t);
  const hash = sourcesHash(root);
  write('README.md', '# Weir');
  write('.weir-compiled/tree/src/cli/main.js', '');
  t.is(sourcesHash(root), hash);
});

test('the repository root is the real one from the sources and from the compiled tree alike', (t) => {
  // This module's own '../..' is the repository, or the compiled tree inside it.
  const here = fileURLToPath(new URL('../..', import.meta.url));
  t.is(REPOSITORY_ROOT, resolve(here.replace(/\.weir-compiled\/tree\/?$/, '')));
  t.false(REPOSITORY_ROOT.includes('.weir-compiled'));
});

test('under npm test, child Weirs run the compiled tree, and it answers as bin/weir.js does', async (t) => {
  const build = currentBuild();
  if (!build) {
    // Outside `npm test` nobody may have built: children then run through tsx, which is correct, only slower.
    t.false(Boolean(process.env.CI), 'npm test builds the tree before ava (npm run build:tests)');
    t.log('no compiled tree of these sources: child Weirs run through tsx (npm run build:tests makes one)');
    return;
  }
  t.deepEqual(childCommands().weir, [join(build, 'src/cli/main.js')]);
  t.deepEqual(childCommands().testRail, [join(build, 'test/support/serve-with-test-rail.js')]);
  const help = (entry: string[]) =>
    new Promise<string>((resolve, reject) =>
      execFile(process.execPath, [...entry, '--help'], (error, stdout) => (error ? reject(error) : resolve(stdout))),
    );
  const [compiled, asUsersRunIt] = await Promise.all([help(childCommands().weir), help([WEIR_BIN])]);
  t.regex(compiled, /^Usage: weir/);
  t.is(compiled, asUsersRunIt);
});
