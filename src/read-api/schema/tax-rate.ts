import { parsePercentage, TAX_TYPES } from '../../shared/tax.ts';
import { ValidationError } from '../../shared/errors.ts';
import {
  closedBody,
  bool,
  clearable,
  metadata,
  oneOf,
  optional,
  requiredText,
  text,
  timestamp,
  withCode,
  z,
} from './fields.ts';
import { issuing } from './validation-codes.ts';

const COUNTRY = /^[A-Za-z]{2}$/;
const TYPES = TAX_TYPES as readonly ['exclusive', 'inclusive'];

/** A percentage as a JSON number or a decimal string, read as its canonical decimal string (checks in `parsePercentage`). */
const percentage = () =>
  issuing(
    ['parameter_missing', 'parameter_invalid'],
    z.unknown().transform((value, ctx): string => {
      if (value === undefined || value === null) {
        ctx.addIssue({ code: 'custom', message: withCode('is required', 'parameter_missing') });
        return z.NEVER;
      }
      try {
        return parsePercentage(value, 'percentage');
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error;
        ctx.addIssue({ code: 'custom', message: withCode(error.message.replace(/^percentage: /, '')) });
        return z.NEVER;
      }
    }),
  ).openapi({
    oneOf: [{ type: 'number' }, { type: 'string' }],
    description: 'From 0 to 100, at most 4 decimal places',
    example: 8.25,
  });

/** A two-letter ISO 3166-1 code, upper-cased; null clears it. */
const country = () =>
  clearable(
    text({ max: 2, pattern: COUNTRY, hint: 'must be a two-letter ISO 3166-1 country code, such as DE' })
      .transform((v) => v.toUpperCase())
      .openapi({ example: 'DE' }),
  );

/** A field an update refuses: a rate's percentage and type never change (sessions and invoices refer to them). */
const fixed = () =>
  z
    .undefined({ error: withCode('cannot be changed on an existing tax rate; create a new tax rate instead') })
    .openapi({ type: 'string', not: {}, description: 'Cannot be changed: create a new tax rate instead' })
    .optional();

export const TaxRateCreate = closedBody(
  {
    percentage: percentage(),
    name: requiredText({ max: 100 }).openapi({ example: 'VAT' }),
    description: optional(text({ max: 500 })),
    country: country(),
    type: optional(oneOf(TYPES)).openapi({ description: 'exclusive (added to the price, the default) or inclusive' }),
    isActive: optional(bool()),
    metadata: optional(metadata()),
  },
  'a tax rate',
).openapi('TaxRateCreateRequest', { example: { name: 'VAT', percentage: 19, type: 'exclusive', country: 'DE' } });

export const TaxRateUpdate = closedBody(
  {
    percentage: fixed(),
    type: fixed(),
    name: optional(text({ min: 1, max: 100 })),
    description: clearable(text({ max: 500 })),
    country: country(),
    isActive: optional(bool()),
    // null clears it.
    metadata: clearable(metadata()),
  },
  'a tax rate',
).openapi('TaxRateUpdateRequest', { example: { name: 'Sales tax' } });

export const TaxRateSchema = z
  .object({
    id: z.string(),
    object: z.literal('tax_rate'),
    organizationId: z.string(),
    livemode: z.boolean(),
    name: z.string(),
    description: z.string().nullable(),
    country: z.string().nullable(),
    percentage: z.number(),
    type: z.enum(TYPES),
    isActive: z.boolean(),
    metadata: z.record(z.string(), z.string()),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  })
  .openapi('TaxRate');
