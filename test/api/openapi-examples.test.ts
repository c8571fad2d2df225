import test from 'ava';
import { validationErrorOf } from '../../src/read-api/schema/route.ts';
import { declaredBodies } from '../support/declared-bodies.ts';
import type { BodySchema } from '../support/request-schemas.ts';
import { schemaValidatorOf } from '../support/response-check.ts';
import { startTestWeir } from '../support/weir-harness.ts';

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

test("every request example in the document is a body its route takes: its own schema parses it, not only the document's", async (t) => {
  const bodies = (await declaredBodies(t)).bodies.filter((b) => b.example !== undefined);
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
  const { bodies } = await declaredBodies(t);
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
