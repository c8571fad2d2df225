import type { Query } from 'mingo';
import type { Filter, ReadDocument } from './read-store.ts';

/** A filter's test of one document. */
export type Matcher = (doc: ReadDocument) => boolean;

/** A test of the value at one path, that value being no array (mingo matches arrays element-wise). */
type FieldTest = { path: readonly string[]; test: (value: unknown) => boolean };

/** Where a plain walk meets an array, MongoDB matches element-wise: mingo decides that document. */
const ARRAY_ON_PATH = Symbol('array on path');

/** The value at `path` when no array is on the way (undefined when something on the way is not an object). */
export const plainValueAt = (doc: ReadDocument, path: readonly string[]): unknown => {
  let value: unknown = doc;
  for (let i = 0; i < path.length; i++) {
    if (Array.isArray(value)) return ARRAY_ON_PATH;
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[path[i]!];
  }
  return Array.isArray(value) ? ARRAY_ON_PATH : value;
};

export const isArrayOnPath = (value: unknown): value is typeof ARRAY_ON_PATH => value === ARRAY_ON_PATH;

/** A path a plain walk reads as mingo does: dotted, no empty part, nothing of the prototype. */
export const splitPlainPath = (field: string): string[] | null => {
  const path = field.split('.');
  for (const segment of path)
    if (segment === '' || segment === '__proto__' || segment === 'constructor' || segment === 'prototype') return null;
  return path;
};

const isPlainScalar = (value: unknown): value is string | number | boolean =>
  typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;

/** mingo's order of two values of one type (string or number): NaN compares equal to everything. */
const order = (a: string | number, b: string | number): number => (a < b ? -1 : a > b ? 1 : 0);

const RANGES: Record<string, (order: number) => boolean> = {
  $gt: (o) => o > 0,
  $gte: (o) => o >= 0,
  $lt: (o) => o < 0,
  $lte: (o) => o <= 0,
};

/**
 * The plain test of one field's condition, or null for mingo: equality with a string, finite
 * number or boolean (`===`); `$gt`, `$gte`, `$lt`, `$lte` with such a string or number (a value of
 * another type never matches: MongoDB's type bracketing); `$regex` given as a string with flags
 * among `imsu` (and `$options`).
 */
function fieldTest(condition: unknown): ((value: unknown) => boolean) | null {
  if (isPlainScalar(condition)) return (value) => value === condition;
  if (!isPlainObject(condition)) return null;
  const operators = Object.keys(condition);
  if (operators.length === 0) return null;
  if (operators.every((operator) => operator === '$regex' || operator === '$options')) {
    const pattern = condition['$regex'];
    const flags = condition['$options'] ?? '';
    if (typeof pattern !== 'string' || typeof flags !== 'string' || !/^[imsu]*$/.test(flags)) return null;
    const regex = new RegExp(pattern, flags);
    return (value) => typeof value === 'string' && regex.test(value);
  }
  const bounds: { operand: string | number; holds: (order: number) => boolean }[] = [];
  for (const operator of operators) {
    const operand = condition[operator];
    const holds = RANGES[operator];
    if (
      holds === undefined ||
      !(typeof operand === 'string' || (typeof operand === 'number' && Number.isFinite(operand)))
    )
      return null;
    bounds.push({ operand, holds });
  }
  return (value) => {
    for (const { operand, holds } of bounds)
      if (typeof value !== typeof operand || !holds(order(value as string | number, operand))) return false;
    return true;
  };
}

/**
 * The filter's test, with what plain JavaScript can decide exactly as mingo does done so (see
 * `fieldTest`; `$or` of such filters too) and the rest by mingo. Top-level conditions are ANDed,
 * so the split changes nothing; a document with an array on a tested path (matched element-wise)
 * gets mingo's test of the whole filter. Testing a 10,000-document tenant with mingo alone is what
 * made the dashboard's lists slow.
 */
export function compileMatcher(filter: Filter, queryFor: (filter: Filter) => Query): Matcher {
  const tests: FieldTest[] = [];
  const alternatives: Matcher[][] = [];
  const rest: Filter = {};
  let restFields = 0;
  for (const field of Object.keys(filter)) {
    const condition = filter[field];
    if (field === '$or' && Array.isArray(condition) && condition.length > 0 && condition.every(isPlainObject)) {
      alternatives.push(condition.map((branch) => compileMatcher(branch, queryFor)));
      continue;
    }
    const path = field.startsWith('$') ? null : splitPlainPath(field);
    const test = path === null ? null : fieldTest(condition);
    if (path !== null && test !== null) {
      tests.push({ path, test });
    } else {
      rest[field] = condition;
      restFields++;
    }
  }
  const whole = queryFor(filter);
  if (tests.length === 0 && alternatives.length === 0) return (doc) => whole.test(doc);
  // Compiled now, as mingo compiles the whole filter: a bad operator throws before any document is read.
  const others = restFields > 0 ? queryFor(rest) : null;
  return (doc) => {
    for (let i = 0; i < tests.length; i++) {
      const { path, test } = tests[i]!;
      const value = plainValueAt(doc, path);
      if (value === ARRAY_ON_PATH) return whole.test(doc);
      if (!test(value)) return false;
    }
    for (let i = 0; i < alternatives.length; i++) if (!alternatives[i]!.some((matches) => matches(doc))) return false;
    return others === null || others.test(doc);
  };
}
