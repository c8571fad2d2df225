import { CURRENCIES } from '../../actors/line-items.ts';
import { MAX_LOGO_BYTES } from '../brand-logo.ts';
import {
  bodyObject,
  bool,
  clearable,
  objectField,
  oneOf,
  optional,
  required,
  requiredText,
  text,
  timestamp,
  url,
  withCode,
  z,
  integer,
} from './fields.ts';

/** Request and answer schemas of the organization: business details, brand, payment setting, withdrawal addresses. */

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const HEX_COLOR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;

// Business details other than the name may be cleared: null clears, left out is unchanged.
const short = () => clearable(text({ max: 64 }));
const emailField = () => clearable(text({ max: 254, pattern: EMAIL, hint: 'must be an email address' }));
const part = () => clearable(text({ max: 200 }));

/** Business details, in the order they are checked; a field left out is unchanged, null clears it (the name cannot be cleared). */
export const BusinessDetailsUpdate = bodyObject({
  name: optional(text({ min: 1, max: 200 })),
  phone: short(),
  supportPhone: short(),
  companyIdentificationNumber: short(),
  taxIdentificationNumber: short(),
  noOfEmployees: short(),
  monthlyPaymentVolume: short(),
  email: emailField(),
  supportEmail: emailField(),
  websiteUrl: clearable(url()),
  supportUrl: clearable(url()),
  privacyUrl: clearable(url()),
  termsUrl: clearable(url()),
  addressDetails: optional(
    objectField({ line1: part(), line2: part(), city: part(), state: part(), postalCode: part(), country: part() }),
  ),
}).openapi('BusinessDetailsUpdate', { example: { name: 'Acme Ltd', supportEmail: 'help@acme.example' } });

/** The brand as JSON; the same fields come as a `multipart/form-data` form with a `brandLogo` file. */
const brandColor = () => text({ pattern: HEX_COLOR, hint: 'must be a hex color such as #1a2b3c' });

export const BrandUpdate = bodyObject({
  brandColor: optional(brandColor()),
  brandLogo: optional(url()),
}).openapi('BrandUpdate', {
  description:
    'JSON, or `multipart/form-data` with a `brandColor` field and a `brandLogo` file (stored and served by Weir)',
  example: { brandColor: '#1a2b3c' },
});

/** The brand as the reference's form: the color as a field, the logo as an uploaded image (read by the route, see brandForm). */
export const BrandForm = z
  .object({
    brandColor: brandColor().optional(),
    brandLogo: z
      .string()
      .optional()
      .openapi({
        format: 'binary',
        description: `The logo: a PNG, JPEG, WebP or GIF image of at most ${MAX_LOGO_BYTES / 1024} KiB, stored and served by Weir`,
      }),
  })
  .openapi('BrandForm', { description: 'At least one of the two; no other part is taken' });

/** What `allowSwap` and `slippagePercentage` say: kept for clients that send them, and used by nothing. */
const NO_SWAP =
  "Recorded as sent, and used by nothing: Weir does no currency conversion (a payer pays in an asset of the session's currency, straight to your wallet)";

export const PaymentSettingUpdate = bodyObject({
  preferredChainId: optional(integer({ min: 1 })),
  preferredCurrency: optional(oneOf(CURRENCIES)),
  allowSwap: optional(bool()).openapi({ description: NO_SWAP }),
  applyGasFee: optional(bool()),
  allowSplitPayments: optional(bool()),
  applyFee: optional(bool()).refine(
    (v) => v !== true,
    withCode('Weir charges no processing fee, so there is none to collect'),
  ),
  slippagePercentage: optional(
    z
      .number({ error: withCode('must be a number') })
      .refine(Number.isFinite, withCode('must be a number'))
      .refine((v) => v >= 0, withCode('must be at least 0'))
      .refine((v) => v <= 100, withCode('must be at most 100')),
  ).openapi({ description: `From 0 to 100. ${NO_SWAP}` }),
}).openapi('PaymentSettingUpdate', { example: { preferredChainId: 11155111, allowSwap: false } });

export const WithdrawalAddressCreate = bodyObject({
  chainId: required(integer({ min: 1 })),
  address: requiredText({ max: 128 }),
  name: optional(text({ max: 100 })),
}).openapi('WithdrawalAddressCreate', {
  example: { chainId: 11155111, address: '0x52908400098527886e0f7030069857d2e4169ee7', name: 'Treasury' },
});

export const WithdrawalAddressUpdate = bodyObject({
  name: optional(text({ min: 1, max: 100 })),
  address: requiredText({ max: 128 }).optional(),
}).openapi('WithdrawalAddressUpdate', { example: { name: 'Treasury (cold)' } });

export const WithdrawalAddressSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    address: z.string(),
    chainId: z.number().int(),
    isDefault: z.boolean(),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  })
  .openapi('WithdrawalAddress');

const nullableText = () => z.string().nullable();

export const OrganizationSchema = z
  .object({
    id: z.string(),
    environment: z.enum(['test', 'live']),
    name: z.string(),
    email: nullableText(),
    supportEmail: nullableText(),
    phone: nullableText(),
    supportPhone: nullableText(),
    addressDetails: z.looseObject({}),
    websiteUrl: nullableText(),
    supportUrl: nullableText(),
    privacyUrl: nullableText(),
    termsUrl: nullableText(),
    companyIdentificationNumber: nullableText(),
    taxIdentificationNumber: nullableText(),
    status: z.string(),
    kind: z.string(),
    type: z.string(),
    brandColor: nullableText(),
    brandLogo: nullableText(),
    addresses: z.array(WithdrawalAddressSchema),
    ownerId: z
      .string()
      .nullable()
      .openapi({ description: "The first owner among the organization's dashboard users; null while it has none" }),
    noOfEmployees: nullableText(),
    monthlyPaymentVolume: nullableText(),
    featureAccessRequests: z.array(z.unknown()),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  })
  .openapi('Organization');

const paymentSettingFields = {
  id: z.string(),
  paymentMethodTypes: z.array(z.string()),
  preferredChainId: z.number().int().nullable(),
  preferredCurrency: z.string().nullable(),
  allowSwap: z.boolean().openapi({ description: NO_SWAP }),
  applyFee: z.boolean(),
  feePercentage: z.number(),
  applyGasFee: z.boolean(),
  allowSplitPayments: z.boolean(),
  slippagePercentage: z.number().openapi({ description: NO_SWAP }),
  createdAt: timestamp(),
  updatedAt: timestamp(),
};

export const PaymentSettingSchema = z.object(paymentSettingFields).openapi('PaymentSetting');

export const PaymentSettingWithChainsSchema = z
  .object({
    ...paymentSettingFields,
    allowedChains: z.array(z.object({ chainId: z.number().int(), withdrawalAddress: z.string().nullable() })),
  })
  .openapi('PaymentSettingWithChains');

export const MessageSchema = z
  .object({ message: z.string(), statusCode: z.literal(200) })
  .openapi('Message', { example: { statusCode: 200, message: 'withdrawal address marked as default' } });
