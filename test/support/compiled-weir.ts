import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The tests' child Weirs run compiled JavaScript when a build of the current sources exists:
 * loading the server through tsx costs about twice the CPU (5 s against 2.5 s a start), and the
 * e2e files start a few hundred of them. A build is keyed on a hash of what it is made from, so
 * an edited source is never run stale: without a matching build, children run through tsx as
 * `weir` itself does. `npm test` builds first (build-compiled-weir.ts).
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** What a build is made from: the server's sources, the test rail's entry, and their settings (tests are not built). */
const SOURCES = ['src', 'machines', 'test/support', 'package.json', 'tsconfig.json'];

/** Where builds live (one folder per sources hash); npm's cache folder, so git and biome ignore it. */
export const buildsFolder = (root = ROOT) => join(root, 'node_modules', '.cache', 'weir-compiled');

function filesOf(root: string, path: string): string[] {
  const full = join(root, path);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return [path];
  return readdirSync(full, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && !/\.test\.tsx?$/.test(entry.name))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)));
}

/** A hash of every source file's path and content. */
export function sourcesHash(root = ROOT): string {
  const hash = createHash('sha256');
  const files = SOURCES.flatMap((path) => filesOf(root, path)).sort();
  for (const file of files)
    hash
      .update(`${file}\0`)
      .update(readFileSync(join(root, file)))
      .update('\0');
  return hash.digest('hex').slice(0, 16);
}

/** The build of today's sources, if it was made. */
export function currentBuild(root = ROOT): string | null {
  const folder = join(buildsFolder(root), sourcesHash(root));
  return existsSync(join(folder, 'src', 'cli', 'main.js')) ? folder : null;
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
        weir: [join(ROOT, 'bin/weir.js')],
        testRail: ['--import', 'tsx', join(ROOT, 'test/support/serve-with-test-rail.ts')],
      };
  return cached;
}
