import { ValidationError } from './errors.ts';
import { AmountError, parseAmount } from './money.ts';

/** Readers for request fields. Each throws a ValidationError naming the field's full path. */
export type Input = Record<string, unknown>;

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

export function asObject(value: unknown, path: string): Input {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ValidationError(path || null, path ? 'must be an object' : 'the request body must be a JSON object');
  }
  return value as Input;
}

export function optionalObject(o: Input, key: string, path = ''): Input | undefined {
  const v = o[key];
  return v === undefined || v === null ? undefined : asObject(v, join(path, key));
}

export function optionalString(
  o: Input,
  key: string,
  path = '',
  options: { max?: number; min?: number; pattern?: RegExp; hint?: string } = {},
): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  const field = join(path, key);
  if (typeof v !== 'string') throw new ValidationError(field, 'must be a string');
  const max = options.max ?? 5000;
  if (v.length > max) throw new ValidationError(field, `must be at most ${max} characters`);
  if (options.min !== undefined && v.length < options.min)
    throw new ValidationError(
      field,
      options.min === 1 ? 'must not be empty' : `must be at least ${options.min} characters`,
      'parameter_invalid_string_empty',
    );
  if (options.pattern && !options.pattern.test(v))
    throw new ValidationError(field, options.hint ?? 'has an invalid format');
  return v;
}

/** A text field that may be cleared: absent = undefined (unchanged), null = null (cleared). */
export function nullableString(o: Input, key: string, max: number): string | null | undefined {
  if (!(key in o)) return undefined;
  if (o[key] === null) return null;
  return optionalString(o, key, '', { max }) ?? null;
}

export function requiredString(
  o: Input,
  key: string,
  path = '',
  options: { max?: number; pattern?: RegExp; hint?: string } = {},
): string {
  const v = optionalString(o, key, path, { min: 1, ...options });
  if (v === undefined) throw new ValidationError(join(path, key), 'is required', 'parameter_missing');
  return v;
}

export function optionalBoolean(o: Input, key: string, path = ''): boolean | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new ValidationError(join(path, key), 'must be true or false');
  return v;
}

export function optionalInteger(
  o: Input,
  key: string,
  path = '',
  range: { min?: number; max?: number } = {},
): number | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  const field = join(path, key);
  if (typeof v !== 'number' || !Number.isSafeInteger(v))
    throw new ValidationError(field, 'must be an integer', 'parameter_invalid_integer');
  if (range.min !== undefined && v < range.min) throw new ValidationError(field, `must be at least ${range.min}`);
  if (range.max !== undefined && v > range.max) throw new ValidationError(field, `must be at most ${range.max}`);
  return v;
}

export function optionalNumber(
  o: Input,
  key: string,
  path = '',
  range: { min?: number; max?: number } = {},
): number | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  const field = join(path, key);
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new ValidationError(field, 'must be a number');
  if (range.min !== undefined && v < range.min) throw new ValidationError(field, `must be at least ${range.min}`);
  if (range.max !== undefined && v > range.max) throw new ValidationError(field, `must be at most ${range.max}`);
  return v;
}

export function optionalEnum<T extends string>(o: Input, key: string, values: readonly T[], path = ''): T | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || !(values as readonly string[]).includes(v)) {
    throw new ValidationError(join(path, key), `must be one of ${values.join(', ')}`);
  }
  return v as T;
}

export function requiredAmount(o: Input, key: string, path = ''): bigint {
  const field = join(path, key);
  if (o[key] === undefined || o[key] === null) throw new ValidationError(field, 'is required', 'parameter_missing');
  try {
    return parseAmount(o[key]);
  } catch (error) {
    if (error instanceof AmountError) throw new ValidationError(field, error.message, 'parameter_invalid_integer');
    throw error;
  }
}

export function optionalArray(
  o: Input,
  key: string,
  path = '',
  options: { max?: number; min?: number } = {},
): unknown[] | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  const field = join(path, key);
  if (!Array.isArray(v)) throw new ValidationError(field, 'must be an array');
  if (options.max !== undefined && v.length > options.max)
    throw new ValidationError(field, `must have at most ${options.max} items`);
  if (options.min !== undefined && v.length < options.min)
    throw new ValidationError(field, `must have at least ${options.min} item${options.min === 1 ? '' : 's'}`);
  return v;
}

/** An absolute http(s) URL. */
export function optionalUrl(o: Input, key: string, path = ''): string | undefined {
  const v = optionalString(o, key, path, { max: 2048 });
  if (v === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(v.replace(/\{CHECKOUT_SESSION_ID\}/g, 'placeholder'));
  } catch {
    throw new ValidationError(join(path, key), 'must be an absolute URL', 'url_invalid');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ValidationError(join(path, key), 'must be an http or https URL', 'url_invalid');
  return v;
}

export function requiredUrl(o: Input, key: string, path = ''): string {
  const v = optionalUrl(o, key, path);
  if (v === undefined) throw new ValidationError(join(path, key), 'is required', 'parameter_missing');
  return v;
}

/** Free-form metadata: at most 50 keys, keys up to 40 characters, string values up to 500. */
export function optionalMetadata(o: Input, key: string, path = ''): Record<string, string> | undefined {
  const v = optionalObject(o, key, path);
  if (!v) return undefined;
  const field = join(path, key);
  const entries = Object.entries(v);
  if (entries.length > 50) throw new ValidationError(field, 'must have at most 50 keys');
  const out: Record<string, string> = {};
  for (const [k, value] of entries) {
    if (k.length === 0 || k.length > 40) throw new ValidationError(`${field}.${k}`, 'keys must be 1 to 40 characters');
    // Assigning it would set the object's prototype instead of storing the key: refuse, never drop.
    if (k === '__proto__')
      throw new ValidationError(`${field}.${k}`, 'is a reserved name and cannot be a metadata key');
    if (typeof value === 'number' || typeof value === 'boolean') out[k] = String(value);
    else if (typeof value === 'string') {
      if (value.length > 500) throw new ValidationError(`${field}.${k}`, 'must be at most 500 characters');
      out[k] = value;
    } else throw new ValidationError(`${field}.${k}`, 'must be a string');
  }
  return out;
}

// Moved to their own module; re-exported for the readers not switched yet.
export { EVM_ADDRESS, evmChecksumHolds } from './evm-address.ts';
