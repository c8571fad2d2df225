import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

const codeOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

const isDirectory = (path: string): Promise<boolean> =>
  stat(path).then(
    (stats) => stats.isDirectory(),
    () => false,
  );

/**
 * `mkdir -p`: `path` and its missing parents, one level at a time. Node's `{ recursive: true }`
 * loops for ever where a parent exists but takes no new entry and says ENOENT (`/proc/x`), so a
 * command given such a path hung instead of failing.
 */
export async function makeDirectory(path: string, mode?: number): Promise<void> {
  const target = resolve(path);
  try {
    await mkdir(target, { mode });
  } catch (error) {
    const code = codeOf(error);
    if (code === 'EEXIST' && (await isDirectory(target))) return;
    const parent = dirname(target);
    // ENOENT beside a parent that is there: the parent refuses it, and making the parent again cannot help.
    if (code !== 'ENOENT' || parent === target || (await isDirectory(parent))) throw error;
    await makeDirectory(parent, mode);
    await mkdir(target, { mode }).catch(async (again: unknown) => {
      // Made meanwhile by another process: there, as asked.
      if (codeOf(again) !== 'EEXIST' || !(await isDirectory(target))) throw again;
    });
  }
}
