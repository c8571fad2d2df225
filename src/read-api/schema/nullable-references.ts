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

/** The document with every nullable reference written as `anyOf` with `{type: 'null'}`. */
export function nullableReferences<T>(document: T): T {
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (!isNode(value)) return value;
    const node = rewritten(value);
    return Object.fromEntries(Object.entries(node).map(([key, child]) => [key, walk(child)]));
  };
  return walk(document) as T;
}
