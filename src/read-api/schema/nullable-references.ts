/**
 * zod-to-openapi writes a nullable (or described) reference as `allOf: [{$ref}, {type: [..., 'null']}]`,
 * which Redoc and SDK generators reject ("Incompatible types in allOf"): the reference is an
 * object, the sibling says object-or-null. OpenAPI 3.1 says it as `anyOf: [{$ref}, {type: 'null'}]`.
 */

type Node = Record<string, unknown>;

const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && !Array.isArray(value);

const nullable = (member: unknown): member is Node & { type: unknown[] } =>
  isNode(member) && Array.isArray(member.type) && member.type.includes('null');

/** Keys that describe a schema without constraining it: they move to the `anyOf`'s level. */
const ANNOTATIONS = new Set(['description', 'example', 'examples', 'title', 'deprecated', 'default']);

/** An enum beside a type that takes null lists null too (zod-to-openapi leaves it out of a nullable literal's). */
function enumWithNull(node: Node): Node {
  const values = node.enum;
  if (!nullable(node) || !Array.isArray(values) || values.includes(null)) return node;
  return { ...node, enum: [...values, null] };
}

/**
 * A nullable schema with its own `oneOf` or `anyOf` (`exactly one of …` as requireds, every branch
 * of which null meets, so `oneOf` refuses it) written as that schema or null.
 */
function combinedOrNull(node: Node): Node {
  if (!nullable(node) || !(Array.isArray(node.oneOf) || Array.isArray(node.anyOf))) return node;
  const outer: Node = {};
  const inner: Node = {};
  for (const [key, value] of Object.entries(node)) (ANNOTATIONS.has(key) ? outer : inner)[key] = value;
  const types = node.type.filter((type) => type !== 'null');
  inner.type = types.length === 1 ? types[0] : types;
  return { ...outer, anyOf: [inner, { type: 'null' }] };
}

function rewritten(node: Node): Node {
  const allOf = node.allOf;
  if (!Array.isArray(allOf) || !allOf.some((m) => isNode(m) && '$ref' in m) || !allOf.some(nullable)) return node;
  const { allOf: _allOf, ...outer } = node;
  const members: unknown[] = [];
  for (const member of allOf) {
    if (!nullable(member)) {
      members.push(member);
      continue;
    }
    const rest: Node = {};
    for (const [key, value] of Object.entries(member)) {
      if (key === 'type') continue;
      if (ANNOTATIONS.has(key)) outer[key] = value;
      else rest[key] = value;
    }
    // What the null-type sibling still constrains (properties, say) stays with the reference.
    if (Object.keys(rest).length > 0) members.push(rest);
  }
  const value = members.length === 1 ? members[0] : { allOf: members };
  return { ...outer, anyOf: [value, { type: 'null' }] };
}

/**
 * The document with every nullable reference, and nullable schema with a `oneOf` or `anyOf`, written
 * as `anyOf` with `{type: 'null'}`, and null in every nullable enum.
 */
export function nullableReferences<T>(document: T): T {
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (!isNode(value)) return value;
    const node = combinedOrNull(enumWithNull(rewritten(value)));
    return Object.fromEntries(Object.entries(node).map(([key, child]) => [key, walk(child)]));
  };
  return walk(document) as T;
}
