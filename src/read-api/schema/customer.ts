import { isEmail, isPhone, PHONE_HINT } from '../../actors/customer.ts';
import {
  arrayOf,
  clearable,
  closedBody,
  closedObject,
  metadata,
  optional,
  requiredText,
  text,
  timestamp,
  withCode,
  z,
} from './fields.ts';

/** An email address, at most 254 characters. */
export const email = (options: { required?: boolean; min?: number } = {}) =>
  text({ max: 254, ...options })
    .refine(isEmail, withCode('must be an email address, such as payer@example.com', 'email_invalid'))
    .openapi({ format: 'email', example: 'ada@example.com' });

/** A phone number: digits, spaces, ( ) - . and an optional leading +; the empty string is taken as given (none). */
export const phone = () =>
  text({ max: 40 })
    .refine((v) => v === '' || isPhone(v), withCode(PHONE_HINT))
    .openapi({ example: '+44 20 7946 0958' });

/** A text part of an address or shipping: absent or null is null. */
const part = (max: number) => optional(text({ max })).transform((v) => v ?? null);

/** A two-letter ISO 3166-1 country code, stored upper-cased. */
const countryCode = () =>
  text({ max: 2 }).regex(/^[A-Za-z]{2}$/, withCode('must be a two-letter ISO 3166-1 country code'));

/** An address: unknown parts refused; `country` a two-letter ISO 3166-1 code, stored upper-cased. */
export const AddressInput = closedObject(
  {
    line1: part(200),
    line2: part(200),
    city: part(200),
    state: part(200),
    postalCode: part(200),
    country: optional(countryCode()).transform((v) => v?.toUpperCase() ?? null),
  },
  'an address',
).openapi('AddressInput');

/** A shipping (who receives the customer's orders, and where): unknown parts refused, a part left out is null. */
export const ShippingInput = closedObject(
  {
    name: part(250),
    email: optional(email()).transform((v) => v ?? null),
    phone: optional(phone()).transform((v) => v ?? null),
    organizationName: part(250),
    address: optional(AddressInput).transform((v) => v ?? null),
  },
  'a shipping',
).openapi('ShippingInput');

/** Customer visibility: 10 shown in the dashboard, 20 API only; sent as a number or a string. */
const visibility = z
  .union([z.literal(10), z.literal(20), z.literal('10'), z.literal('20')], {
    error: withCode('must be one of 10, 20'),
  })
  .transform(Number)
  .openapi({ type: 'integer', enum: [10, 20], description: '10: shown in the dashboard, 20: API only' });

/** How many tax ids a customer keeps at most. */
export const MAX_TAX_IDS = 25;

/** A tax id as given: its `value` required, `name` its kind (such as `eu_vat`), `country` a two-letter code. */
const TaxIdInput = closedObject(
  {
    name: optional(text({ max: 50 })).transform((v) => v || null),
    value: requiredText({ max: 100 }),
    country: optional(countryCode()).transform((v) => v?.toUpperCase() ?? null),
  },
  'a tax id',
).openapi('TaxIdInput', { example: { name: 'eu_vat', value: 'DE123456789', country: 'DE' } });

/** The reference's `taxIds` list: at most MAX_TAX_IDS, none given twice; `data` left out is none. */
export const TaxIdsInput = closedObject(
  {
    object: optional(z.literal('list', { error: withCode('must be "list"') })),
    data: optional(
      arrayOf(TaxIdInput, { max: MAX_TAX_IDS }).superRefine((list, ctx) => {
        const seen = new Map<string, number>();
        list.forEach((t, i) => {
          const key = JSON.stringify([t.name, t.value, t.country]);
          const first = seen.get(key);
          if (first === undefined) seen.set(key, i);
          else ctx.addIssue({ code: 'custom', path: [i], message: `repeats the tax id at ${first}` });
        });
      }),
    ),
  },
  'a tax id list',
)
  .transform((v) => ({ object: 'list' as const, data: v.data ?? [] }))
  .openapi('TaxIdsInput', {
    example: { object: 'list', data: [{ name: 'eu_vat', value: 'DE123456789', country: 'DE' }] },
  });

const customerFields = {
  phone: clearable(phone()),
  name: clearable(text({ max: 250 })),
  organizationName: clearable(text({ max: 250 })),
  customerReferenceId: clearable(text({ max: 200 })),
  address: clearable(AddressInput),
  shipping: clearable(ShippingInput),
  /** null clears every key. */
  metadata: clearable(metadata()).transform((v) => (v === null ? {} : v)),
  visibility: optional(visibility),
  /** Replaces the customer's tax ids whole; null clears them. */
  taxIds: clearable(TaxIdsInput),
};
export const CustomerCreate = closedBody(
  { email: email({ required: true, min: 1 }), ...customerFields },
  'a customer',
).openapi('CustomerCreate', {
  example: { email: 'ada@example.com', name: 'Ada Lovelace', metadata: { crmId: '42' } },
});
export const CustomerUpdate = closedBody(
  { email: optional(email({ min: 1 })), ...customerFields },
  'a customer',
).openapi('CustomerUpdate', {
  description: 'Only the fields sent change; null clears a field',
  example: { name: 'Ada L.' },
});

export const Address = z
  .object({
    line1: z.string().nullable(),
    line2: z.string().nullable(),
    city: z.string().nullable(),
    state: z.string().nullable(),
    postalCode: z.string().nullable(),
    country: z.string().nullable(),
  })
  .openapi('Address');

/** A tax id the customer keeps (the reference's TaxIdDto). */
const TaxId = z
  .object({
    id: z.string(),
    customerId: z.string(),
    name: z.string().nullable(),
    value: z.string(),
    country: z.string().nullable(),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  })
  .openapi('TaxId');

const Shipping = z
  .object({
    name: z.string().nullable(),
    email: z.string().nullable(),
    phone: z.string().nullable(),
    organizationName: z.string().nullable(),
    address: Address.nullable(),
  })
  .openapi('Shipping');

/** A customer as the API answers it (the documents' example). */
export const CUSTOMER_EXAMPLE = {
  id: '0f8fad5b-d9cb-469f-a165-70867728950e',
  organizationId: 'b1e5a0a4-6c4e-4f55-9d8a-4a9a0c5e2f10',
  environment: 'test',
  email: 'ada@example.com',
  name: 'Ada Lovelace',
  phone: null,
  organizationName: null,
  customerReferenceId: null,
  address: null,
  taxIds: { object: 'list', data: [] },
  metadata: {},
  visibility: 10,
  customerNumber: '0F8FAD5B',
  livemode: false,
  createdAt: '2026-05-01T08:00:00.000Z',
  updatedAt: '2026-05-01T08:00:00.000Z',
};

export const CustomerSchema = z
  .object({
    id: z.string(),
    organizationId: z.string(),
    environment: z.enum(['test', 'live']),
    email: z.string(),
    name: z.string().nullable(),
    phone: z.string().nullable(),
    organizationName: z.string().nullable(),
    customerReferenceId: z.string().nullable(),
    address: Address.nullable(),
    shipping: Shipping.nullable().optional().openapi({ description: 'Absent until one was given' }),
    taxIds: z.object({ object: z.literal('list'), data: z.array(TaxId) }),
    metadata: z.record(z.string(), z.string()),
    visibility: z.number().int(),
    customerNumber: z.string(),
    livemode: z.boolean(),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  })
  .openapi('Customer', { example: CUSTOMER_EXAMPLE });
