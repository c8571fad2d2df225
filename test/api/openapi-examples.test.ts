import test, { type ExecutionContext } from 'ava';
import type { z } from 'zod';
import { openApiPath } from '../../src/read-api/schema/openapi-document.ts';
import { type DeclaredRoute, declarationOf, validationErrorOf } from '../../src/read-api/schema/route.ts';
import { schemaValidatorOf } from '../support/response-check.ts';
import { startTestWeir } from '../support/weir-harness.ts';
import { mountedLayers } from '../hostile/route-table.ts';

type Node = Record<string, unknown>;

/**
 * Every example the document shows beside a schema: a media type's or a parameter's or a header's
 * `example` and `examples` (by value), and a schema's own `example`, with where it is.
 */
function examplesOf(document: unknown): { at: string; schema: unknown; value: unknown }[] {
  const found: { at: string; schema: unknown; value: unknown }[] = [];
  const walk = (node: unknown, at: string, parentKey: string): void => {
    if (Array.isArray(node)) {
      for (const [i, item] of node.entries()) walk(item, `${at}/${i}`, String(i));
      return;
    }
    if (!node || typeof node !== 'object') return;
    const object = node as Node;
    // `properties` and `examples` maps are keyed by names, which may be `example` or `schema`.
    const named = parentKey === 'properties' || parentKey === 'examples';
    if (!named && 'schema' in object) {
      if ('example' in object) found.push({ at: `${at}/example`, schema: object.schema, value: object.example });
      for (const [name, example] of Object.entries((object.examples as Record<string, { value?: unknown }>) ?? {}))
        if (example && 'value' in example)
          found.push({ at: `${at}/examples/${name}`, schema: object.schema, value: example.value });
    } else if (!named && 'example' in object) {
      const { example, ...schema } = object;
      found.push({ at: `${at}/example`, schema, value: example });
    }
    for (const [key, value] of Object.entries(object)) walk(value, `${at}/${key}`, key);
  };
  walk(document, '#', '');
  return found;
}

test('every example in the served document (request bodies, parameters, answers, error bodies, webhook payloads, schemas) is valid against the schema beside it', async (t) => {
  const weir = await startTestWeir(t);
  const document = (await (await fetch(`${weir.url}/api/v1/openapi.json`)).json()) as Node;
  const validatorOf = schemaValidatorOf(document);
  const examples = examplesOf(document);
  t.true(examples.length > 100, `${examples.length} examples`);
  t.true(examples.some((e) => e.at.startsWith('#/webhooks/')));
  t.true(examples.some((e) => e.at.includes('/parameters/')));
  const invalid: string[] = [];
  for (const { at, schema, value } of examples) {
    const problem = validatorOf(schema)(value);
    if (problem) invalid.push(`${at}: ${problem}`);
  }
  t.deepEqual(invalid, []);
});

type Media = { schema?: { $ref?: string; example?: unknown }; example?: unknown };
type BodySchema = { required?: string[]; properties?: Record<string, unknown> };
type Served = {
  paths: Record<string, Record<string, { requestBody?: { content?: Record<string, Media> } }>>;
  components: { schemas: Record<string, BodySchema & { example?: unknown }> };
};

/** Each declared route with a JSON body, its schema in the served document and the example shown for it. */
async function declaredBodies(t: ExecutionContext) {
  const weir = await startTestWeir(t);
  const document = (await (await fetch(`${weir.url}/api/v1/openapi.json`)).json()) as Served;
  const bodies: { name: string; route: DeclaredRoute & { body: z.ZodType }; schema: BodySchema; example: unknown }[] =
    [];
  for (const { layer } of mountedLayers(weir)) {
    const route = declarationOf(layer);
    const media = route?.body
      ? document.paths[openApiPath(String(layer.path)).path]?.[route.method]?.requestBody?.content?.['application/json']
      : undefined;
    if (!route?.body || !media) continue;
    const ref = media.schema?.$ref;
    const schema = (ref ? document.components.schemas[ref.split('/').pop()!] : media.schema) as BodySchema & {
      example?: unknown;
    };
    bodies.push({
      name: `${route.method} ${String(layer.path)}`,
      route: route as DeclaredRoute & { body: z.ZodType },
      schema: schema ?? {},
      example: media.example ?? schema?.example,
    });
  }
  return bodies;
}

test("every request example in the document is a body its route takes: its own schema parses it, not only the document's", async (t) => {
  const bodies = (await declaredBodies(t)).filter((b) => b.example !== undefined);
  t.true(bodies.length > 10, `${bodies.length} request examples`);
  const refused: string[] = [];
  for (const { name, route, example } of bodies) {
    const result = route.body.safeParse(example);
    if (!result.success) refused.push(`${name}: ${validationErrorOf(result.error).message}`);
  }
  t.deepEqual(refused, []);
});

type EitherOr = { anyOf?: { required?: string[] }[]; oneOf?: { required?: string[] }[] };

/** Whether the document marks `field` required: outright, or in one branch of an either/or (`productId` or `productData`). */
function documentedRequired(schema: BodySchema & EitherOr, field: string): boolean {
  if (schema.required?.includes(field)) return true;
  return [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].some((branch) => branch.required?.includes(field));
}

test('a body field is documented as required exactly when leaving it out answers 400 "… is required"', async (t) => {
  const bodies = await declaredBodies(t);
  const wrong: string[] = [];
  for (const { name, route, schema, example } of bodies) {
    // An empty body: the first field it misses must be documented as required.
    const empty = route.body.safeParse({});
    if (!empty.success) {
      const missing = /^(\w+): is required/.exec(validationErrorOf(empty.error).message)?.[1];
      if (missing && !documentedRequired(schema, missing)) wrong.push(`${name}: ${missing} answers "is required"`);
    }
    if (!example || typeof example !== 'object') continue;
    // The example without each of its fields in turn: "is required" exactly for the documented ones.
    for (const field of Object.keys(example)) {
      const { [field]: _left, ...rest } = example as Record<string, unknown>;
      const result = route.body.safeParse(rest);
      const message = result.success ? '' : validationErrorOf(result.error).message;
      const answers = message.startsWith(`${field}: is required`);
      if (answers !== documentedRequired(schema, field))
        wrong.push(`${name}: ${field} documented ${answers ? 'optional' : 'required'}, left out answers "${message}"`);
    }
  }
  t.true(bodies.length > 10);
  t.deepEqual(wrong, []);
});
