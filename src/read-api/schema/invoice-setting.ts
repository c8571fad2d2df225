import { bodyObject, clearable, integer, oneOf, optional, text, timestamp, withCode, z } from './fields.ts';

/** A prefix such that prefix + a six-digit (or longer) sequence is still a valid invoice number. */
const PREFIX = /^[A-Za-z0-9][A-Za-z0-9._/#-]{0,19}$/;
export const MAX_SEQUENCE = 999_999_999;

export const InvoiceSettingUpdate = bodyObject({
  numberingScheme: optional(
    oneOf(['merchant_level', 'customer_level']).refine((v) => v !== 'customer_level', {
      message: withCode('Weir numbers invoices per organization (merchant_level); customer_level is not offered'),
    }),
  ).openapi({ description: 'Only merchant_level: Weir numbers invoices per organization' }),
  invoicePrefix: optional(
    text({ pattern: PREFIX, hint: 'must be 1 to 20 letters, digits or . _ / # -, starting with a letter or digit' }),
  ).openapi({ example: 'INV' }),
  nextInvoiceSequence: optional(integer({ min: 1, max: MAX_SEQUENCE })),
  // null clears them.
  description: clearable(text({ max: 5000 })),
  footer: clearable(text({ max: 5000 })),
}).openapi('InvoiceSettingUpdateRequest', { example: { invoicePrefix: 'ACME', nextInvoiceSequence: 100 } });

export const InvoiceSettingSchema = z
  .object({
    id: z.string(),
    object: z.literal('invoice_setting'),
    createdAt: timestamp(),
    updatedAt: timestamp(),
    numberingScheme: z.enum(['merchant_level']),
    invoicePrefix: z.string(),
    nextInvoiceSequence: z.number().int().min(1),
    description: z.string().nullable(),
    footer: z.string().nullable(),
  })
  .openapi('InvoiceSetting');
