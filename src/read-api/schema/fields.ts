import { extendZodWithOpenApi, getOpenApiMetadata } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { WALLET_INVALID } from '../../actors/session-networks.ts';
import { AmountError, parseAmount } from '../../shared/money.ts';
import { isTimeZone } from '../../shared/time-zone.ts';
import { BOUND_DESCRIPTIONS, BOUND_OPS, type BoundOp, TIME_ZONE_MESSAGE } from '../instant-range.ts';
import { messageAndCode, withCode } from './error-codes.ts';
import { issuing } from './validation-codes.ts';

// `.openapi(...)` on every zod schema: names components and overrides what the wire shows.
extendZodWithOpenApi(z);
export { messageAndCode, withCode, z };

/**
 * Field schemas that speak Weir's validation language: each message is the one the API gave before
 * schemas (`must be a string`, `is required`…), and carries the error `code` it answers with, so the
 * route helper turns the first zod issue into the same 400 as before.
 */
export const REQUIRED = withCode('is required', 'parameter_missing');
export const absent = (input: unknown) => input === undefined || input === null;

/** One of `values`, required: absent or null is `is required`. */
export const requiredOneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, {
    error: (issue) => (absent(issue.input) ? REQUIRED : withCode(`must be one of ${values.join(', ')}`)),
  });

/** A field that must be given: absent or null is `is required`, before the field's own schema reads it. */
export const required = <T extends z.ZodType>(schema: T) =>
  issuing(
    ['parameter_missing'],
    z.preprocess((value, ctx) => {
      if (absent(value)) ctx.addIssue({ code: 'custom', message: REQUIRED });
      return value;
    }, schema),
  );

/** A JSON Schema type name. */
export type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array' | 'null';

/**
 * `schema`, which takes null, documented as taking it: zod-to-openapi writes a type set with
 * `.openapi({type})` (an integer's, an amount's string, metadata's object) as given, without the
 * null its nullable wrapper adds (an enum beside it gets its null in `nullableReferences`).
 */
function nullDocumented<T extends z.ZodType>(schema: T): T {
  const { type } = getOpenApiMetadata(schema) as { type?: JsonType | JsonType[] };
  if (type === undefined) return schema;
  const types = [type].flat();
  return types.includes('null') ? schema : schema.openapi({ type: [...types, 'null'] });
}

/** Absent or null reads as undefined: the API has always taken `null` as "not given" for optional fields. */
export const optional = <T extends z.ZodType>(schema: T) =>
  nullDocumented(schema.nullish().transform((v): z.output<T> | undefined => v ?? undefined));

/** A field that may be cleared: absent is undefined (unchanged), null is null (cleared). */
export const clearable = <T extends z.ZodType>(schema: T) => nullDocumented(schema.nullable().optional());

type TextOptions = { max?: number; min?: number; pattern?: RegExp; hint?: string };

/** A string, at most `max` (default 5000) characters; `min: 1` refuses the empty string. */
export function text(options: TextOptions & { required?: boolean } = {}) {
  const max = options.max ?? 5000;
  let schema = z
    .string({ error: (issue) => (options.required && absent(issue.input) ? REQUIRED : withCode('must be a string')) })
    .max(max, withCode(`must be at most ${max} characters`));
  if (options.min !== undefined)
    schema = schema.min(
      options.min,
      withCode(
        options.min === 1 ? 'must not be empty' : `must be at least ${options.min} characters`,
        'parameter_invalid_string_empty',
      ),
    );
  if (options.pattern) schema = schema.regex(options.pattern, withCode(options.hint ?? 'has an invalid format'));
  return schema;
}

/** A required, non-empty string (absent and null are `is required`). */
export const requiredText = (options: TextOptions = {}) => text({ min: 1, ...options, required: true });

/** A whole number within `range`, with the API's messages. */
export const integer = (range: { min?: number; max?: number } = {}) => {
  let schema = z
    .number({ error: withCode('must be an integer', 'parameter_invalid_integer') })
    .int(withCode('must be an integer', 'parameter_invalid_integer'))
    .refine(Number.isSafeInteger, withCode('must be an integer', 'parameter_invalid_integer'));
  if (range.min !== undefined)
    schema = schema.refine((v) => v >= range.min!, withCode(`must be at least ${range.min}`));
  if (range.max !== undefined) schema = schema.refine((v) => v <= range.max!, withCode(`must be at most ${range.max}`));
  return schema.openapi({ type: 'integer', minimum: range.min, maximum: range.max });
};

export const bool = () => z.boolean({ error: withCode('must be true or false') });

/** One of `values`; anything else is `must be one of …`. */
export const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: withCode(`must be one of ${values.join(', ')}`) });

/** An absolute http(s) URL (a `{CHECKOUT_SESSION_ID}` placeholder allowed), at most 2048 characters. */
export function url(options: { required?: boolean } = {}) {
  const checked = text({ max: 2048, required: options.required }).superRefine((value, ctx) => {
    let parsed: URL;
    try {
      parsed = new URL(value.replace(/\{CHECKOUT_SESSION_ID\}/g, 'placeholder'));
    } catch {
      ctx.addIssue({ code: 'custom', message: withCode('must be an absolute URL', 'url_invalid') });
      return;
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      ctx.addIssue({ code: 'custom', message: withCode('must be an http or https URL', 'url_invalid') });
  });
  return issuing(['url_invalid'], checked).openapi({ format: 'uri', example: 'https://shop.example/thanks' });
}

/** How every API amount is scaled, whatever the asset's own decimals (`API_DECIMALS`). */
export const AMOUNT_SCALE = 'Scaled by 10^8 whatever the asset: 150000000 is 1.50 of the currency';

/**
 * An amount scaled by 10^8: a digit string (or a safe integer number) on the wire, a bigint
 * inside. Documented as the digit string the API answers with.
 */
export function amount() {
  const parsed = z.unknown().transform((value, ctx): bigint => {
    if (absent(value)) {
      ctx.addIssue({ code: 'custom', message: REQUIRED });
      return z.NEVER;
    }
    try {
      return parseAmount(value);
    } catch (error) {
      if (!(error instanceof AmountError)) throw error;
      ctx.addIssue({ code: 'custom', message: withCode(error.message, 'parameter_invalid_integer') });
      return z.NEVER;
    }
  });
  return issuing(['parameter_missing', 'parameter_invalid_integer'], parsed).openapi({
    type: 'string',
    pattern: '^\\d+$',
    description: `A digit string. ${AMOUNT_SCALE}`,
    example: '150000000',
  });
}

/** A digit string as the API answers amounts (responses). */
export const amountString = () => z.string().regex(/^\d+$/).openapi({ pattern: '^\\d+$', description: AMOUNT_SCALE });

/** A digit string in an asset's own chain units (its decimals: 10^6 for USDC), as on chain. */
export const chainAmountString = () =>
  z
    .string()
    .regex(/^\d+$/)
    .openapi({ pattern: '^\\d+$', description: "In the asset's chain units (its own decimals)" });

/** Free-form metadata: at most 50 keys, keys up to 40 characters, string values up to 500 (numbers and booleans taken as text). */
export function metadata() {
  return z
    .unknown()
    .transform((value, ctx): Record<string, string> => {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        ctx.addIssue({ code: 'custom', message: withCode('must be an object') });
        return z.NEVER;
      }
      const entries = Object.entries(value);
      if (entries.length > 50) {
        ctx.addIssue({ code: 'custom', message: withCode('must have at most 50 keys') });
        return z.NEVER;
      }
      const out: Record<string, string> = {};
      for (const [k, v] of entries) {
        const fail = (message: string) => {
          ctx.addIssue({ code: 'custom', message: withCode(message), path: [k] });
          return z.NEVER;
        };
        if (k.length === 0 || k.length > 40) return fail('keys must be 1 to 40 characters');
        // Assigning it would set the object's prototype instead of storing the key: refuse, never drop.
        if (k === '__proto__') return fail('is a reserved name and cannot be a metadata key');
        if (typeof v === 'number' || typeof v === 'boolean') out[k] = String(v);
        else if (typeof v === 'string') {
          if (v.length > 500) return fail('must be at most 500 characters');
          out[k] = v;
        } else return fail('must be a string');
      }
      return out;
    })
    .openapi({
      type: 'object',
      additionalProperties: { type: 'string', maxLength: 500 },
      maxProperties: 50,
      description: 'Your own key-value pairs: at most 50 keys of up to 40 characters, values up to 500',
      example: { orderId: '6735' },
    });
}

/** The schemas `ignored` and `unsupported` made: documented, never suggested in a refusal's list. */
const ignoredFields = new WeakSet<object>();

/**
 * Fields the reference API defines that Weir does not use, with the reason: accepted (so a client
 * built from the reference keeps working) and ignored, and documented as ignored. Declared here,
 * not read from the reference, so the reference-compatibility test can hold the list to it.
 */
export function ignored<const K extends readonly string[]>(names: K, why: string) {
  const field = z
    .unknown()
    .optional()
    .transform((): undefined => undefined)
    .openapi({ description: `Ignored by Weir: ${why}`, deprecated: true });
  ignoredFields.add(field);
  return Object.fromEntries(names.map((name) => [name, field])) as { [N in K[number]]: typeof field };
}

/**
 * Fields the reference API defines whose silent drop would change where money goes or when a payer
 * is asked (a per-session withdrawal address, a scheduled send): absent, null or empty they are
 * taken, any other value is refused naming the field, since Weir cannot do what it asks.
 */
export function unsupported<const K extends readonly string[]>(names: K, why: string) {
  const field = z
    .unknown()
    .optional()
    .refine(
      (value) => value === undefined || value === null || (Array.isArray(value) && value.length === 0),
      withCode(`is not supported by Weir: ${why}`),
    )
    .transform((): undefined => undefined)
    .openapi({ description: `Not supported by Weir (refused unless null or empty): ${why}`, deprecated: true });
  ignoredFields.add(field);
  return Object.fromEntries(names.map((name) => [name, field])) as { [N in K[number]]: typeof field };
}

/**
 * An object whose keys are only `shape`'s: every other key is refused (never dropped, so a typo
 * such as `successURL` is a 400, not a field silently unset) with `is not <what> field; use …`
 * (the fields Weir uses); anything not an object is `notObject`.
 */
export function closedObject<S extends z.ZodRawShape>(shape: S, what = 'a known', notObject = 'must be an object') {
  const names = Object.entries(shape)
    .filter(([, field]) => !ignoredFields.has(field))
    .map(([name]) => name)
    .join(', ');
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? withCode(`is not ${what} field; use ${names}`)
        : issue.code === 'invalid_type'
          ? withCode(notObject)
          : undefined,
  });
}

/** A request body of `shape`'s keys only (another is refused, naming it); anything else is `the request body must be a JSON object`. */
export const closedBody = <S extends z.ZodRawShape>(shape: S, what = 'a known') =>
  closedObject(shape, what, 'the request body must be a JSON object');

/** The request body's own object, closed: see `closedBody`. */
export const bodyObject = <S extends z.ZodRawShape>(shape: S) => closedBody(shape);

/** A nested object field, closed: another key is refused, naming it; anything else is `must be an object`. */
export const objectField = <S extends z.ZodRawShape>(shape: S) => closedObject(shape);

/** An array, with the API's messages for its bounds. */
export function arrayOf<T extends z.ZodType>(item: T, bounds: { min?: number; max?: number } = {}) {
  let schema = z.array(item, { error: withCode('must be an array') });
  if (bounds.min !== undefined)
    schema = schema.min(bounds.min, withCode(`must have at least ${bounds.min} item${bounds.min === 1 ? '' : 's'}`));
  if (bounds.max !== undefined) schema = schema.max(bounds.max, withCode(`must have at most ${bounds.max} items`));
  return schema;
}

/** The error body every failure answers with. */
export const ErrorBodySchema = z
  .object({
    statusCode: z.number().int(),
    error: z.string(),
    message: z.string(),
    code: z.string(),
  })
  .openapi('Error', {
    description: 'Every failure: the HTTP status, its name, a message naming the field at fault, and a stable `code`',
    example: { statusCode: 400, error: 'Bad Request', message: 'email: is required', code: 'parameter_missing' },
  });

/** A page of a list: `{page, limit, count, hasMore, data}`. */
export const listOf = <T extends z.ZodType>(item: T) =>
  z.object({
    page: z.number().int().min(1),
    limit: z.number().int().min(1).max(200),
    count: z.number().int().min(0),
    hasMore: z.boolean(),
    data: z.array(item),
  });

/** Whether `field` was made by `ignored` or `unsupported` (documented, never suggested as a name to use). */
export const isIgnoredField = (field: unknown): boolean =>
  typeof field === 'object' && field !== null && ignoredFields.has(field);

/**
 * Query parameters the reference defines that Weir cannot honour: absent or empty they are taken,
 * any other value is refused naming the parameter and why, never ignored (the list would answer
 * records the filter was meant to leave out).
 */
export function unsupportedQuery<const K extends readonly string[]>(names: K, why: string) {
  const field = z
    .string()
    .optional()
    .refine((value) => value === undefined || value === '', withCode(`is not supported by Weir: ${why}`))
    .transform((): undefined => undefined)
    .openapi({ description: `Not supported by Weir (refused unless empty): ${why}`, deprecated: true });
  ignoredFields.add(field);
  return Object.fromEntries(names.map((name) => [name, field])) as { [N in K[number]]: typeof field };
}

/**
 * `createdAt[gt|gte|lt|lte]` style bounds on `field` (checked by the list, a date alone its whole
 * day UTC, or in `timezone` when one is given), and its refused null tests.
 */
function dateBounds(field: string) {
  const bound = (op: BoundOp) =>
    z
      .string()
      .optional()
      .openapi({
        description: `${BOUND_DESCRIPTIONS[op](field)}; with \`timezone\`, a date alone is that day in the zone`,
      });
  return {
    ...Object.fromEntries(BOUND_OPS.map((op) => [`${field}[${op}]`, bound(op)])),
    ...unsupportedQuery([`${field}[isnull]`, `${field}[notnull]`], `bound ${field} with gt, gte, lt or lte`),
  };
}

const PAGING = {
  page: z.string().optional().openapi({ description: 'Page number, from 1', example: '1' }),
  limit: z.string().optional().openapi({ description: 'Items per page, 1 to 200 (default 200)', example: '20' }),
};

/**
 * `?timezone=`: an IANA time zone (`UTC` when absent or empty), a 400 naming the parameter otherwise;
 * the reports, the lists and the sessions export read a date alone as that whole day there.
 */
export const timeZoneQuery = (description: string) =>
  z
    .string()
    .optional()
    .refine((v) => v === undefined || v === '' || isTimeZone(v), withCode(TIME_ZONE_MESSAGE))
    .openapi({ description, example: 'Europe/Paris' });

/** What `timezone` does to a list's date bounds, in the words every list and the sessions export share. */
const ZONED_BOUNDS_DESCRIPTION =
  'A date alone in a `createdAt[...]` bound (or another date bound) is that whole day in the zone, daylight saving included: `createdAt[gte]=2026-11-01&createdAt[lte]=2026-11-01&timezone=Europe/Paris` is all of 1 November in Paris (23:00Z on 31 October to 23:00Z on 1 November). A timestamp stays exact (UTC when it has no offset)';

/** A list's `timezone` (read by `listFilter`); `lead` says what more a route reads in it (the export's `from` / `to`). */
export const listTimeZoneQuery = (
  lead = 'The IANA time zone (`UTC` unless given) whose days a date alone names, as the reports and the sessions export read them.',
) => timeZoneQuery(`${lead} ${ZONED_BOUNDS_DESCRIPTION}`);

/**
 * The query of every list route: paging, `createdAt` bounds (and `dateFields`' bounds, which the
 * list reads the same way), the `timezone` they are read in; each route adds its own filters. `field.gt`
 * is read as `field[gt]`. `paged: false` (an export: the whole filtered set) leaves paging out, so
 * `page` is refused as unknown.
 */
export function listQuery<S extends z.ZodRawShape>(
  filters: S,
  options: { dateFields?: readonly string[]; paged?: boolean } = {},
) {
  const bounds: Record<`${string}[${string}]`, z.ZodType> = Object.assign(
    {},
    ...['createdAt', ...(options.dateFields ?? [])].map(dateBounds),
  );
  return z.looseObject({
    ...(options.paged === false ? {} : PAGING),
    ...bounds,
    timezone: listTimeZoneQuery(),
    ...filters,
  });
}

/**
 * The sentence that ends the description of every route whose query `listQuery` built (the document
 * adds it), naming its date bounds and the `timezone` they are read in; null for another query.
 */
export function listBoundsDescription(query: unknown): string | null {
  const shape = query instanceof z.ZodObject ? (query.shape as Record<string, unknown>) : {};
  if (!('timezone' in shape)) return null;
  const fields = Object.keys(shape)
    .filter((name) => name.endsWith('[gte]'))
    .map((name) => `\`${name.slice(0, -'[gte]'.length)}\``);
  if (fields.length === 0) return null;
  const named = fields.length === 1 ? fields[0] : `${fields.slice(0, -1).join(', ')} and ${fields.at(-1)}`;
  return `Bound ${named} with \`[gt|gte|lt|lte]\`: a timestamp is exact, a date alone is that whole day in \`timezone\` (an IANA time zone, UTC unless given).`;
}

/** A plain `?name=` query filter (checked by the list itself, so the schema only documents it). */
export const queryFilter = (description: string) => z.string().optional().openapi({ description });

/**
 * Refuses a query parameter `declared` does not name (a typo such as `statuss` would otherwise
 * answer every record): `name.op` and `name[]` are read as `name[op]` and `name`, as lists read them.
 * Answers the unknown name and the message, or null.
 */
export function unknownQueryParameter(
  schema: unknown,
  query: Record<string, unknown>,
): { name: string; message: string } | null {
  const shape = schema instanceof z.ZodObject ? (schema.shape as Record<string, unknown>) : {};
  for (const name of Object.keys(query)) {
    const declared = name.replace(/\[\]$/, '').replace(/^([^.[\]]+)\.([^.[\]]+)$/, '$1[$2]');
    if (Object.hasOwn(shape, declared)) continue;
    const known = Object.keys(shape).filter((key) => !isIgnoredField(shape[key]));
    return {
      name,
      message: `is not a known parameter; ${known.length ? `use ${known.join(', ')}` : 'this route takes none'}`,
    };
  }
  return null;
}

/** `2026-05-01T08:00:00.000Z` */
export const timestamp = () => z.string().openapi({ format: 'date-time' });

/** `{id}` in the path. */
export const idParams = (what: string) =>
  z.object({
    id: z.string().openapi({ description: `The ${what}'s id`, example: '0f8fad5b-d9cb-469f-a165-70867728950e' }),
  });

/** The 404 of a route that reads one record by id. */
export const notFound = (what: string) => ({
  status: 404,
  codes: ['resource_missing'],
  description: `No ${what} with this id in the key's organization and environment`,
});

/**
 * The 422 of a route whose payments would go to a wallet of the organization that is broken
 * (`walletsInvalid`): `what` says what would pay into it.
 */
export const walletInvalid = (what: string) => ({
  status: 422,
  codes: [WALLET_INVALID],
  description: `A wallet of the organization that ${what} would pay into fails its EIP-55 checksum (a likely typo), or every one it could use is an address the chain cannot pay (both stored before Weir refused them): nothing is written; the message names each wallet and how to correct it`,
});

/** The 400s of a body's fields. */
export const invalidFields = (...codes: string[]) => ({
  status: 400,
  codes: ['parameter_invalid', 'parameter_missing', ...codes],
  description: 'A field is missing or invalid: the message names its path',
});

/** What a DELETE answers: `{statusCode: 200, message}` (the reference's shape), the message naming what and which. */
export const DeletedMessage = z
  .object({ statusCode: z.literal(200), message: z.string() })
  .openapi('DeletedMessage', { example: { statusCode: 200, message: 'customer 0f8fad5b-… deleted' } });
