import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { README, readmeSection } from '../support/readme.ts';
import { ROOT } from '../support/weir-process.ts';

/**
 * The README's API route table against the document Weir serves (`weir-client/openapi.json`, which
 * `weir-client/generated.test.ts` holds to what Weir serves): a route the README never names is one
 * a merchant reading it cannot find. The table abbreviates (`GET/PUT …/{id}`, `…/deactivate`), so a
 * route counts as named when the README holds its whole path, or when a table row that names its
 * resource (`/api/v1/webhook-endpoints`) holds `…/` and the rest of its path.
 */

const document = JSON.parse(await readFile(join(ROOT, 'weir-client', 'openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, unknown>>;
};

/** `/api/v1/organization/withdrawal-addresses/{id}` → its tails: `{id}`, `withdrawal-addresses/{id}`, … */
const tails = (path: string): string[] => {
  const segments = path.split('/').slice(3);
  return segments.map((_, i) => segments.slice(i).join('/'));
};

/** The resource a path belongs to in the table: `/api/v1/<first segment>`, and the longer prefixes of it. */
const roots = (path: string): string[] => {
  const segments = path.split('/');
  return segments.slice(4).map((_, i) => segments.slice(0, 4 + i).join('/'));
};

test("every API route of the document is named in the README (the route table, or the section about it), and the table's routes exist", (t) => {
  const api = readmeSection('## API');
  const rows = api.split('\n').filter((line) => line.startsWith('| '));
  const unnamed = Object.keys(document.paths)
    .filter((path) => path.startsWith('/api/v1/'))
    .filter((path) => !README.includes(`${path}\``) && !README.includes(`${path} `) && !README.includes(`${path}?`))
    .filter(
      (path) =>
        !rows.some(
          (row) =>
            roots(path).some((root) => row.includes(`${root}\``) || row.includes(`${root}/`)) &&
            tails(path).some((tail) => row.includes(`…/${tail}\``) || row.includes(`…/${tail} `)),
        ),
    );
  t.deepEqual(unnamed, [], 'routes the README does not name');

  // The other way: each whole /api/v1 path the table names is one of the document's.
  const named = rows.flatMap((row) => [...row.matchAll(/(\/api\/v1\/[\w\-/{}.]+)/g)].map((m) => m[1]!));
  const known = new Set(Object.keys(document.paths));
  t.deepEqual(
    named.filter((path) => !known.has(path)),
    [],
    'paths of the README table that Weir does not serve',
  );
});
