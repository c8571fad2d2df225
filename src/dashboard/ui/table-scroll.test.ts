import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';

const dashboard = new URL('..', import.meta.url).pathname;

// A bare sideways-scrolling wrapper cannot be reached by keyboard (axe: scrollable-region-focusable).
test('every table that scrolls sideways on a phone is a TableScroll, a named region a keyboard can focus and scroll', async (t) => {
  const files = (await readdir(dashboard, { recursive: true })).filter((f) => f.endsWith('.tsx'));
  t.true(files.length > 10, 'the dashboard pages were read');
  const bare: string[] = [];
  for (const file of files) {
    if (file === join('ui', 'components.tsx')) continue;
    const source = await readFile(join(dashboard, file), 'utf8');
    if (source.includes('class="table-wrap"')) bare.push(file);
  }
  t.deepEqual(bare, []);
});
