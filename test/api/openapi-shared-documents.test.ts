import test from 'ava';
import type { OpenApiDocuments } from '../../src/read-api/routes/api-docs.ts';
import { startTestWeir } from '../support/weir-harness.ts';

const documentOf = async (url: string): Promise<string> => (await fetch(`${url}/api/v1/openapi.json`)).text();

test('Weirs of one process with the same routes serve one document built once; other routes get their own, as a Weir building its own would', async (t) => {
  const documents: OpenApiDocuments = new Map();
  const withAdmin = await startTestWeir(t, {}, { openApiDocuments: documents });
  const alike = await startTestWeir(t, {}, { openApiDocuments: documents });
  const withoutAdmin = await startTestWeir(t, { adminToken: undefined }, { openApiDocuments: documents });
  const alone = await startTestWeir(t, {}, { openApiDocuments: new Map() });

  const first = await documentOf(withAdmin.url);
  t.is(documents.size, 1);
  t.is(await documentOf(alike.url), first);
  t.is(documents.size, 1, 'the same routes: the same document, not built again');

  const other = await documentOf(withoutAdmin.url);
  t.is(documents.size, 2);
  t.true(first.includes('"/admin/organizations"'));
  t.false(other.includes('"/admin/organizations"'), 'no admin token: no admin routes in its document');

  t.is(await documentOf(alone.url), first, 'as a Weir that built its own');
});
