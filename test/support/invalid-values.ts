import { type BodySchema, resolved } from './request-schemas.ts';

/** What the document says of a field, as far as refusing it goes. */
export type FieldSchema = BodySchema & {
  enum?: unknown[];
  const?: unknown;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  required?: string[];
};

/** Every branch a field may take (its `anyOf`/`oneOf`/`allOf` members), references followed. */
function branches(document: unknown, schema: FieldSchema | undefined): FieldSchema[] {
  const s = resolved(document, schema) as FieldSchema | undefined;
  if (!s) return [];
  const members = [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])] as FieldSchema[];
  return [s, ...members.flatMap((m) => branches(document, m))];
}

/**
 * Values a field's schema refuses, in each way it can: the wrong type, null, and past each bound it
 * declares (empty, too long, off the pattern or format, outside the enum, range or item counts).
 */
export function invalidValues(document: unknown, schema: FieldSchema | undefined): unknown[] {
  const values: unknown[] = [null];
  for (const s of branches(document, schema)) {
    const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
    // Another type: a number for a string, a string for anything else.
    if (types.length) values.push(types.includes('string') ? 12345 : 'x');
    if (s.enum || s.const !== undefined) values.push('not-one-of-them', 0);
    if (s.minLength !== undefined) values.push('', ' ');
    if (s.maxLength !== undefined) values.push('x'.repeat(s.maxLength + 1));
    if (s.pattern !== undefined) values.push('!pattern!', '-1');
    if (s.format) values.push('not a valid value', 'ftp://x.example');
    if (types.includes('string')) values.push('', 'x'.repeat(10_001));
    if (types.includes('integer') || types.includes('number')) values.push(-1, 1.5, 0, 2 ** 60);
    if (s.minimum !== undefined) values.push(s.minimum - 1);
    if (s.maximum !== undefined) values.push(s.maximum + 1);
    if (types.includes('array') || s.items)
      values.push(
        [],
        [null],
        [12345],
        Array.from({ length: 101 }, () => 'x'),
      );
    if (s.maxItems !== undefined) values.push(Array.from({ length: s.maxItems + 1 }, () => 'x'));
    if (types.includes('object') || s.properties) values.push({}, [], { unknownKey: 1 });
    if (!types.length && !s.enum) values.push('x', 12345, { nested: true });
  }
  return values;
}

/** A field's name and the schema of its value, at a path into a body. */
export type Field = { path: (string | number)[]; schema: FieldSchema };

/** The fields of an object schema, nested objects and the first item of arrays included, to `depth`. */
export function fieldsOf(document: unknown, schema: FieldSchema | undefined, depth = 3, at: (string | number)[] = []) {
  const fields: Field[] = [];
  if (depth === 0) return fields;
  for (const s of branches(document, schema)) {
    for (const [name, property] of Object.entries(s.properties ?? {})) {
      // Fields kept for the reference's clients (ignored, or refused unless empty) answer one code at most.
      if ((property as { deprecated?: boolean }).deprecated) continue;
      const path = [...at, name];
      fields.push({ path, schema: property as FieldSchema });
      fields.push(...fieldsOf(document, property as FieldSchema, depth - 1, path));
    }
    const items = resolved(document, s.items) as FieldSchema | undefined;
    if (items && at.length > 0) fields.push(...fieldsOf(document, items, depth - 1, [...at, 0]));
  }
  return fields;
}

/** `base` with the value at `path` set to `value` (undefined: removed), made where missing. */
export function withValue(base: unknown, path: (string | number)[], value: unknown): unknown {
  const root: unknown = structuredClone(base ?? {});
  let node = root as Record<string | number, unknown>;
  for (const [i, key] of path.entries()) {
    if (i === path.length - 1) {
      if (value === undefined) delete node[key];
      else node[key] = value;
      break;
    }
    const next = node[key];
    if (next === null || typeof next !== 'object') node[key] = typeof path[i + 1] === 'number' ? [{}] : {};
    node = node[key] as Record<string | number, unknown>;
  }
  return root;
}
