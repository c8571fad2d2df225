import test from 'ava';
import { z } from 'zod';
import { type BodySchema, resolved } from '../support/request-schemas.ts';
import { declaredBodies } from '../support/declared-bodies.ts';
import { schemaValidatorOf } from '../support/response-check.ts';

/** The schema a field's value is read by, past the wrappers that only say absent, null or a default. */
function core(schema: z.ZodType): z.ZodType {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable || schema instanceof z.ZodDefault)
    return core(schema.unwrap() as z.ZodType);
  // A transform reads its input's schema; a preprocess (`required`) the schema it hands on to.
  if (schema instanceof z.ZodPipe)
    return core((schema.in instanceof z.ZodTransform ? schema.out : schema.in) as z.ZodType);
  return schema;
}

/** `node` and the schemas it combines (`$ref`s followed): where a property or `items` may be declared. */
function members(document: unknown, node: BodySchema | undefined): BodySchema[] {
  const schema = resolved(document, node);
  if (!schema) return [];
  const combined = [...(schema.allOf ?? []), ...(schema.anyOf ?? []), ...(schema.oneOf ?? [])];
  return [schema, ...combined.flatMap((member) => members(document, member))];
}

/** `value` with null at `path` (a deep copy). */
function withNull(value: unknown, path: readonly (string | number)[]): unknown {
  const copy = structuredClone(value) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  node[path[path.length - 1]!] = null;
  return copy;
}

test('every request body field (nested ones too) is documented as taking null exactly when its schema takes null', async (t) => {
  const { document, bodies } = await declaredBodies(t);
  const validatorOf = schemaValidatorOf(document);
  const wrong: string[] = [];
  let checked = 0;

  /**
   * Walks `schema`'s object fields beside the document's `doc`, and the example's part there when
   * it reaches them. A field takes null when its own schema parses null and, where the example
   * reaches, the whole body with null there parses too (a field checked by a later step, say).
   */
  const walk = (
    name: string,
    body: z.ZodType,
    schema: z.ZodType,
    doc: BodySchema | undefined,
    example: { whole: unknown; part: unknown } | null,
    path: (string | number)[],
  ): void => {
    const object = core(schema);
    if (object instanceof z.ZodArray) {
      const items = members(document, doc).find((m) => m.items)?.items;
      const first = Array.isArray(example?.part) ? example.part[0] : undefined;
      walk(name, body, object.element as z.ZodType, items, first === undefined ? null : { ...example!, part: first }, [
        ...path,
        0,
      ]);
      return;
    }
    if (!(object instanceof z.ZodObject)) return;
    for (const [key, field] of Object.entries(object.shape as Record<string, z.ZodType>)) {
      const at = [...path, key];
      const fieldDoc = members(document, doc).find((m) => m.properties?.[key])?.properties?.[key];
      if (!fieldDoc) continue;
      checked++;
      const own = field.safeParse(null).success;
      const takes = own && (example ? body.safeParse(withNull(example.whole, at)).success : true);
      const documented = validatorOf(fieldDoc)(null) === null;
      // A deprecated field (ignored, or one that cannot be changed) says in words what it takes.
      const refusedInWords = fieldDoc.deprecated === true;
      if (takes !== documented && (takes || (!own && !refusedInWords)))
        wrong.push(
          `${name} ${at.join('.')}: ${takes ? 'takes null, documented without' : 'refuses null, documented with'}`,
        );
      const part =
        example && typeof example.part === 'object' && example.part !== null
          ? (example.part as Record<string, unknown>)[key]
          : undefined;
      walk(
        name,
        body,
        field,
        fieldDoc,
        part === undefined || part === null ? null : { whole: example!.whole, part },
        at,
      );
    }
  };

  for (const { name, route, schema, example } of bodies)
    walk(name, route.body, route.body, schema, example === undefined ? null : { whole: example, part: example }, []);
  t.true(checked > 200, `${checked} fields checked`);
  t.deepEqual(wrong, []);
});
