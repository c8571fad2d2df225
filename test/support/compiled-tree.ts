import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * `npm test` runs the suite compiled to JavaScript, and the tests' child Weirs too: loading through
 * tsx costs about half again the CPU of loading compiled code (a test file that starts a Weir in
 * process, 11 s against 7.5 s), twice for a child `weir serve` (5 s against 2.5 s), and the suite
 * has 400 files and starts a few hundred children. The compiled tree is a copy of the sources with
 * each module's JavaScript beside it, and links to the rest of the repository, so paths a test
 * builds from its own location still resolve. It is keyed on a hash of the sources: a source edited
 * since means children run bin/weir.js through tsx, never a stale build (`npx ava FILE` runs the
 * sources through tsx as ever).
 */

/** The repository, also from a module of the compiled tree (whose package.json is a link to the real one). */
export const REPOSITORY_ROOT = dirname(realpathSync(fileURLToPath(new URL('../../package.json', import.meta.url))));

/** The folders copied whole and compiled (bench and scripts: what tests import of them); the rest of the top is linked. */
export const COMPILED = ['src', 'machines', 'test', 'weir-client', 'bench', 'scripts'];

/** Where the tree is built; git (and so biome) ignore it. */
export const treeParent = (root = REPOSITORY_ROOT) => join(root, '.weir-compiled');
export const treeFolder = (root = REPOSITORY_ROOT) => join(treeParent(root), 'tree');
/** The file of the tree holding the hash of the sources it was built from. */
export const HASH_FILE = 'SOURCES_HASH';

function filesOf(root: string, path: string): string[] {
  const full = join(root, path);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return [path];
  return readdirSync(full, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)));
}

/** A hash of every path and content the tree is built from. */
export function sourcesHash(root = REPOSITORY_ROOT): string {
  const hash = createHash('sha256');
  const files = [...COMPILED, 'package.json', 'tsconfig.json'].flatMap((path) => filesOf(root, path)).sort();
  for (const file of files)
    hash
      .update(`${file}\0`)
      .update(readFileSync(join(root, file)))
      .update('\0');
  return hash.digest('hex').slice(0, 16);
}

/** The compiled tree, if it was built from the sources as they are now (`hash`, when already taken). */
export function currentBuild(root = REPOSITORY_ROOT, hash = sourcesHash(root)): string | null {
  const hashFile = join(treeFolder(root), HASH_FILE);
  return existsSync(hashFile) && readFileSync(hashFile, 'utf8') === hash ? treeFolder(root) : null;
}

export type ChildCommands = {
  /** Node's arguments before `weir`'s own (`serve`, `org create`, …). */
  weir: string[];
  /** Node's arguments that run serve-with-test-rail, before serve's options. */
  testRail: string[];
};

let cached: ChildCommands | undefined;

/** How a child Weir is started: compiled when `currentBuild` exists, else through tsx. Looked up once per process. */
export function childCommands(): ChildCommands {
  if (cached) return cached;
  const build = currentBuild();
  cached = build
    ? { weir: [join(build, 'src/cli/main.js')], testRail: [join(build, 'test/support/serve-with-test-rail.js')] }
    : {
        weir: [join(REPOSITORY_ROOT, 'bin/weir.js')],
        testRail: ['--import', 'tsx', join(REPOSITORY_ROOT, 'test/support/serve-with-test-rail.ts')],
      };
  return cached;
}
