import test from 'ava';
import { type FieldSchema, fieldsOf, invalidValues, withValue } from '../support/invalid-values.ts';
import { responseCheckFor } from '../support/response-check.ts';
import { ADMIN_TOKEN, createMerchant, startTestWeir } from '../support/weir-harness.ts';

type Operation = {
  description?: string;
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; schema?: FieldSchema }[];
  requestBody?: { content?: Record<string, { schema?: FieldSchema; example?: unknown }> };
};
type Document = { paths: Record<string, Record<string, Operation>> };

/** Query values a parameter may be refused for: empty, not a number, negative, too long. */
const QUERY_VALUES = ['', 'x', '-1', 'x'.repeat(300)];

test('every 400 code a route answers to a field its schema refuses (each body and query field made invalid in each way its schema allows) is listed for that route in the document', async (t) => {
  const weir = await startTestWeir(t, { rateLimits: false });
  const check = await responseCheckFor(weir.url);
  if (!check) return t.fail('no document served');
  const { testSecretKey } = await createMerchant(weir.url);
  const document = (await (await fetch(`${weir.url}/api/v1/openapi.json`)).json()) as Document;

  const requests: { method: string; path: string; query?: string; body?: unknown }[] = [];
  for (const [template, item] of Object.entries(document.paths))
    for (const [method, operation] of Object.entries(item)) {
      // Routes not declared with a schema have nothing to derive codes from.
      if (operation.description?.startsWith('Not declared') || template === '/metrics') continue;
      const path = template.replace(/\{[^}]+\}/g, '0f8fad5b-d9cb-469f-a165-70867728950e');
      for (const parameter of operation.parameters ?? [])
        if (parameter.in === 'query')
          for (const value of QUERY_VALUES)
            requests.push({
              method,
              path,
              query: `${encodeURIComponent(parameter.name)}=${encodeURIComponent(value)}`,
            });
      const json = operation.requestBody?.content?.['application/json'];
      if (!json?.schema) continue;
      const base = json.example ?? {};
      requests.push({ method, path, body: base }, { method, path, body: null }, { method, path, body: [] });
      for (const field of fieldsOf(document, json.schema)) {
        requests.push({ method, path, body: withValue(base, field.path, undefined) });
        for (const value of new Set(invalidValues(document, field.schema)))
          requests.push({ method, path, body: withValue(base, field.path, value) });
      }
    }

  const unique = [...new Map(requests.map((r) => [JSON.stringify(r), r])).values()];
  const unlisted = new Set<string>();
  const failed = new Set<string>();
  const met = new Set<string>();
  const send = async ({ method, path, query, body }: (typeof requests)[number]) => {
    const url = `${weir.url}${path}${query ? `?${query}` : ''}`;
    const key = path.startsWith('/admin') ? ADMIN_TOKEN : path.startsWith('/api/v1') ? testSecretKey : undefined;
    const response = await fetch(url, {
      method: method.toUpperCase(),
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status >= 500) failed.add(`${method} ${path} ${response.status} ${text.slice(0, 200)}`);
    if (response.status !== 400 || !response.headers.get('content-type')?.includes('json')) return;
    const code = (JSON.parse(text) as { code?: string }).code ?? '';
    met.add(code);
    if (!check.documentedCodes(method, url, 400)?.includes(code)) unlisted.add(`${method} ${path}: ${code}`);
  };
  // A few at a time: the server is this process's, and the machine is shared.
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < unique.length) await send(unique[next++]!);
    }),
  );
  t.log(`${unique.length} requests, codes met: ${[...met].sort().join(', ')}`);
  t.deepEqual([...unlisted].sort(), []);
  t.deepEqual([...failed].sort(), []);
  // The generator reaches the schema-answered codes, not only the generic one.
  for (const code of [
    'parameter_missing',
    'parameter_invalid_string_empty',
    'parameter_invalid_integer',
    'url_invalid',
  ])
    t.true(met.has(code), code);
});
