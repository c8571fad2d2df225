import type { z } from 'zod';
import { messageAndCode } from './error-codes.ts';

/**
 * The error codes a request schema can answer with, read from the schema itself so the document
 * lists what validation answers (route.ts turns the first zod issue into a 400 through
 * `messageAndCode`; so does this, on the messages each type and check would give).
 */

type Def = {
  type: string;
  error?: (issue: Record<string, unknown>) => unknown;
  checks?: { _zod: { def: Def & { check: string } } }[];
  [key: string]: unknown;
};
type Schema = { _zod: { def: Def } };

/** Codes a closure (a transform, a superRefine, a preprocess) adds issues with, which no walk can read. */
const declared = new WeakMap<object, readonly (string | z.ZodType)[]>();

/**
 * Declares what `schema`'s own closure (its last transform, preprocess or superRefine) answers with,
 * out of a walk's sight: codes, or the schemas it parses with. `withCode`'s default needs no declaring.
 */
export function issuing<T extends z.ZodType>(codes: readonly (string | z.ZodType)[], schema: T): T {
  const def = (schema as unknown as Schema)._zod.def;
  const key =
    def.type === 'pipe'
      ? [def.out, def.in]
          .map((side) => (side as Schema)._zod.def)
          .find((side) => side.type === 'transform' && !declared.has(side))
      : def.checks?.length
        ? def.checks[def.checks.length - 1]!._zod.def
        : def;
  declared.set(key ?? def, [...(declared.get(key ?? def) ?? []), ...codes]);
  return schema;
}

/**
 * What a value that reached a schema may be: absent (a missing key) or null are answered apart;
 * `strings`: path and query values, always text in an object, never another type; `present`: path
 * values, each always there.
 */
type Reach = { undefined: boolean; null: boolean; strings?: boolean; present?: boolean };

/** The message an error option gives for an issue; undefined where zod's own (code-less) message speaks. */
function messageOf(error: Def['error'], issue: Record<string, unknown>): string | undefined {
  const given = error?.(issue);
  if (typeof given === 'string') return given;
  if (given && typeof given === 'object' && typeof (given as { message?: unknown }).message === 'string')
    return (given as { message: string }).message;
  return undefined;
}

/** Types whose parse can refuse a value by its type alone. */
const TYPED = new Set([
  'string',
  'number',
  'boolean',
  'bigint',
  'object',
  'array',
  'enum',
  'literal',
  'union',
  'date',
  'tuple',
  'record',
  'null',
  'undefined',
  'never',
  'nan',
  'symbol',
  'int',
  'file',
  'custom',
  'nonoptional',
  'template_literal',
  'map',
  'set',
]);

const ISSUE_OF_TYPE: Record<string, string> = {
  enum: 'invalid_value',
  literal: 'invalid_value',
  union: 'invalid_union',
  custom: 'custom',
  template_literal: 'invalid_format',
};

const ISSUE_OF_CHECK: Record<string, string> = {
  max_length: 'too_big',
  less_than: 'too_big',
  max_size: 'too_big',
  min_length: 'too_small',
  greater_than: 'too_small',
  min_size: 'too_small',
  length_equals: 'too_small',
  string_format: 'invalid_format',
  number_format: 'invalid_type',
  multiple_of: 'not_multiple_of',
  custom: 'custom',
};

/** The codes `schema` can answer a request with, sorted. */
export function validationCodes(schema: z.ZodType, reach: Reach = { undefined: true, null: true }): string[] {
  const codes = new Set<string>();
  const seen = new Set<Def>();
  const add = (message: string | undefined) => codes.add(messageAndCode(message ?? '').code);

  const addDeclared = (entries: readonly (string | z.ZodType)[] | undefined) => {
    for (const entry of entries ?? [])
      if (typeof entry === 'string') codes.add(entry);
      else visit(entry as unknown as Schema, { undefined: true, null: true });
  };
  const visit = (node: Schema, at: Reach): void => {
    const def = node._zod.def;
    if (seen.has(def)) return;
    seen.add(def);
    addDeclared(declared.get(def));
    if (TYPED.has(def.type)) {
      const issue = ISSUE_OF_TYPE[def.type] ?? 'invalid_type';
      const typed = at.strings && (def.type === 'string' || def.type === 'object');
      const inputs: unknown[] = typed ? [] : [def.type === 'string' ? 0 : 'x'];
      if (at.undefined) inputs.push(undefined);
      if (at.null) inputs.push(null);
      for (const input of inputs) add(messageOf(def.error, { code: issue, expected: def.type, input }));
      if (def.type === 'object' && (def.catchall as Schema | undefined)?._zod.def.type === 'never')
        add(messageOf(def.error, { code: 'unrecognized_keys', keys: ['x'], input: {} }));
    }
    for (const check of def.checks ?? []) {
      const checkDef = check._zod.def;
      const named = declared.get(checkDef);
      if (named) addDeclared(named);
      // A superRefine without declared codes answers `withCode`'s default, as a plain refine does.
      else add(messageOf(checkDef.error, { code: ISSUE_OF_CHECK[checkDef.check] ?? 'custom', input: 'x' }));
    }
    const child = (value: unknown, reached: Reach) => {
      if (value && typeof value === 'object' && '_zod' in value) visit(value as Schema, reached);
    };
    const field: Reach = at.strings
      ? { undefined: !at.present, null: false, strings: true }
      : { undefined: true, null: true };
    const item: Reach = { undefined: false, null: true };
    switch (def.type) {
      case 'object':
        for (const value of Object.values(def.shape as Record<string, unknown>)) child(value, field);
        child(def.catchall, item);
        break;
      case 'array':
      case 'set':
        child(def.element, item);
        break;
      case 'record':
      case 'map':
        child(def.keyType, { undefined: false, null: false });
        child(def.valueType, item);
        break;
      case 'tuple':
        for (const value of def.items as unknown[]) child(value, item);
        child(def.rest, item);
        break;
      case 'union':
        for (const option of def.options as unknown[]) child(option, at);
        break;
      case 'intersection':
        child(def.left, at);
        child(def.right, at);
        break;
      case 'optional':
        child(def.innerType, { ...at, undefined: false });
        break;
      case 'nullable':
        child(def.innerType, { ...at, null: false });
        break;
      case 'default':
      case 'prefault':
        child(def.innerType, { ...at, undefined: false });
        break;
      case 'nonoptional':
      case 'readonly':
      case 'catch':
      case 'success':
      case 'promise':
        child(def.innerType, at);
        break;
      case 'lazy':
        child((def.getter as () => unknown)(), at);
        break;
      case 'pipe':
        child(def.in, at);
        // After a transform, what the next schema meets is anything the transform gives back.
        child(def.out, (def.in as Schema)._zod.def.type === 'transform' ? at : { undefined: false, null: false });
        break;
    }
  };
  visit(schema as unknown as Schema, reach);
  return [...codes].sort();
}
