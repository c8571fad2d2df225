import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { buildsFolder, childCommands, currentBuild, sourcesHash } from './compiled-weir.ts';
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
  return { root, write };
}

test('a build is found only for the sources it was made from: an edited, added or renamed source means none (never run stale)', (t) => {
  const { root, write } = fakeRoot(t);
  t.is(currentBuild(root), null, 'nothing built yet');
  const hash = sourcesHash(root);
  t.is(sourcesHash(root), hash, 'the same sources, the same hash');
  write(join('node_modules/.cache/weir-compiled', hash, 'src/cli/main.js'), 'export {};');
  t.is(currentBuild(root), join(buildsFolder(root), hash));

  write('machines/session.ts', 'export const a = 2;');
  t.not(sourcesHash(root), hash);
  t.is(currentBuild(root), null, 'a source edited after the build');
  write('machines/session.ts', 'export const a = 1;');
  t.is(currentBuild(root), join(buildsFolder(root), hash), 'back as built');

  write('src/hosted/assets/wallet.css', 'body {}');
  t.is(currentBuild(root), null, 'an asset added after the build');
  rmSync(join(root, 'src/hosted/assets/wallet.css'));
  rmSync(join(root, 'machines/session.ts'));
  write('machines/sessions.ts', 'export const a = 1;');
  t.is(currentBuild(root), null, 'a source renamed after the build');
});

test('what is not a source (tests, README, the builds themselves) does not change the hash', (t) => {
  const { root, write } = fakeRoot(t);
  const hash = sourcesHash(root);
  write('test/e2e/cli.test.ts', 'test();');
  write('src/cli/main.test.ts', 'test();');
  write('test/support/compiled-weir.test.ts', 'test();');
  write('README.md', '# Weir');
  write('node_modules/.cache/weir-compiled/abc/src/cli/main.js', '');
  t.is(sourcesHash(root), hash);
});

test('the build npm test makes is what child Weirs run, and it answers as bin/weir.js does', async (t) => {
  const build = currentBuild();
  if (!build) {
    // Outside `npm test` nobody may have built: children then run through tsx, which is correct, only slower.
    t.false(Boolean(process.env.CI), 'npm test builds before ava (npm run build:test-weir)');
    t.log('no build of these sources: child Weirs run through tsx (npm run build:test-weir makes one)');
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
