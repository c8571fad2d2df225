import { ValidationError } from '../shared/errors.ts';

export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

const HEADER = 'Idempotency-Key';

/** C0 controls and DEL: a tab inside a header value reaches here (HTTP allows it); none belongs in a key. */
const hasControlCharacter = (value: string) =>
  [...value].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);

/**
 * The `Idempotency-Key` a request sent (from Node's `rawHeaders`: name, value, name, value...), or
 * null when it sent none. A key sent but unusable is a 400 naming the header, never "no key": the
 * client meant the request to be retry-safe, and running it unguarded would break that silently.
 */
export function idempotencyKeyOf(rawHeaders: readonly string[]): string | null {
  const values: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() === 'idempotency-key') values.push(rawHeaders[i + 1]!);
  }
  if (values.length === 0) return null;
  // Node would join two of them with ", " into one key neither request meant.
  if (values.length > 1) throw new ValidationError(HEADER, 'must be sent once');
  const key = values[0]!;
  if (key.trim() === '') throw new ValidationError(HEADER, 'must not be empty');
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH)
    throw new ValidationError(HEADER, `must be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`);
  if (hasControlCharacter(key)) throw new ValidationError(HEADER, 'must not contain control characters');
  return key;
}
