import { readFile } from 'node:fs/promises';
import test from 'ava';
import { GENERATED, generatedFiles } from './generate.ts';

// The client is only as true as its generated files: when a route's schema changes, this fails
// until `npm run client:generate` is run and its output committed.
test('the committed openapi.json and schema.d.ts match what Weir serves now', async (t) => {
  const fresh = await generatedFiles();
  const stale = 'stale: run `npm run client:generate` and commit weir-client/';
  t.true((await readFile(GENERATED.openapi, 'utf8')) === fresh.openapi, `openapi.json is ${stale}`);
  t.true((await readFile(GENERATED.schema, 'utf8')) === fresh.schema, `src/schema.d.ts is ${stale}`);
});
