import { readdirSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DashboardPage } from '../page.ts';

/**
 * The registration point of dashboard screens. A screen is a module of this folder that exports
 * `page` (built with `definePage`, see ../page.ts): `pages/<screen>.tsx`, or `pages/<screen>/page.tsx`
 * with its other parts beside it. Every such module is found and mounted at start, and its
 * `screen` adds its nav item (order and path come from ../screens.ts), so adding a screen edits
 * no shared file. Tests (`*.test.ts`) and other files of a screen's folder are not pages.
 */
const here = new URL('./', import.meta.url);
const registry = basename(fileURLToPath(import.meta.url));
// Pages are `.tsx` run through tsx, or `.js` where the tree was compiled (the tests' child Weirs),
// and then this module is `.js` too: it is the one such module of the folder that is not a page.
const pageFile = extname(registry) === '.js' ? '.js' : '.tsx';

function pageModules(): URL[] {
  const found: URL[] = [];
  for (const entry of readdirSync(here, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.isFile() && entry.name.endsWith(pageFile) && entry.name !== registry && !entry.name.includes('.test.'))
      found.push(new URL(entry.name, here));
    if (entry.isDirectory() && readdirSync(new URL(`${entry.name}/`, here)).includes(`page${pageFile}`))
      found.push(new URL(`${entry.name}/page${pageFile}`, here));
  }
  return found;
}

async function loadPages(): Promise<DashboardPage[]> {
  const pages: DashboardPage[] = [];
  for (const url of pageModules()) {
    const module = (await import(url.href)) as { page?: DashboardPage };
    if (!module.page || typeof module.page.routes !== 'function')
      throw new Error(`${url.pathname} is in the dashboard's pages folder but exports no page (definePage)`);
    pages.push(module.page);
  }
  const screens = pages.flatMap((p) => (p.screen ? [p.screen] : []));
  const twice = screens.find((s, i) => screens.indexOf(s) !== i);
  if (twice) throw new Error(`two dashboard page modules register the screen ${twice}`);
  return pages;
}

/** Every page module of this folder, loaded once. */
export const DASHBOARD_PAGES: readonly DashboardPage[] = await loadPages();
