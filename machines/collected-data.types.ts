import type { CustomerAddress, TaxIdInput } from '../src/actors/customer.ts';

/**
 * What a checkout collects from the payer, in the reference API's shapes: `customerDetails`,
 * `billingDetails`, `shippingDetails` and `customFields` (CheckoutSessionCustomFieldDto).
 */

/** The reference API's custom field label (`{type: "custom", custom: "Company"}`). */
export type CustomFieldLabel = { type: 'custom'; custom: string };

/** Length bounds of an answer, as the reference names them (null: no bound). */
export type LengthBounds = { minimumLength: number | null; maximumLength: number | null };

export type NumericRules = LengthBounds & { minimum: string | null; maximum: string | null };
export type DropdownOption = { label: string; value: string };

type CustomFieldBase = { key: string; label: CustomFieldLabel; optional: boolean };

/**
 * A question to the payer. Text answers have length bounds; numeric answers (integers or
 * decimals) have value bounds (decimal strings) and digit-count bounds; dropdown answers are one
 * of the options' values.
 */
export type CustomField =
  | (CustomFieldBase & { type: 'text'; text: LengthBounds })
  | (CustomFieldBase & { type: 'numeric'; numeric: NumericRules })
  | (CustomFieldBase & { type: 'dropdown'; dropdown: { options: DropdownOption[] } });

export type CustomFieldType = CustomField['type'];

/** A question with the payer's answer under `<type>.value` (null: an optional field left empty). */
export type AnsweredCustomField =
  | (CustomFieldBase & { type: 'text'; text: LengthBounds & { value: string | null } })
  | (CustomFieldBase & { type: 'numeric'; numeric: NumericRules & { value: string | null } })
  | (CustomFieldBase & { type: 'dropdown'; dropdown: { options: DropdownOption[]; value: string | null } });

/**
 * The payer as they described themselves (or as the merchant prefilled them with `customerData`);
 * `address` is the billing address when one was asked for. `organizationName` only comes from
 * `customerData` (absent on sessions recorded before it existed), and so do `taxIds`, which go
 * onto the customer the session creates.
 */
export type CustomerDetails = {
  name: string | null;
  email: string | null;
  phone: string | null;
  organizationName?: string | null;
  address: CustomerAddress | null;
  taxIds?: { object: 'list'; data: TaxIdInput[] };
};

/** A billing or shipping address with the name it is for. */
export type AddressDetails = { name: string | null; address: CustomerAddress };

/** Everything a checkout collected from the payer (null: not asked for). */
export type CollectedData = {
  customerDetails: CustomerDetails | null;
  billingDetails: AddressDetails | null;
  shippingDetails: AddressDetails | null;
  customFields: { fields: AnsweredCustomField[] } | null;
};
