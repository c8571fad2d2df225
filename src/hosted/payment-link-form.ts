import type {
  AnsweredCustomField,
  CollectedData,
  CustomField,
  LengthBounds,
} from '../../machines/collected-data.types.ts';
import { MAX_ANSWER_LENGTH } from '../../machines/payment-link.decide.ts';
import type { PaymentLink } from '../../machines/payment-link.types.ts';
import { isEmail, isPhone, PHONE_HINT, type CustomerAddress } from '../actors/customer.ts';
import { compareDecimals, DECIMAL, decimalAmount, digitCount } from '../shared/decimal.ts';
import { documentAmount, isExactInDecimals } from '../shared/money.ts';

/** The page's form as posted: input name → value. */
export type PayerForm = Record<string, string>;

/**
 * What the form says above itself when what was posted could not be read as the page's form (another
 * content type, a body cut short): plain words, never the refusal behind it.
 */
export const FORM_NOT_READ =
  'Your answers could not be read: they were not sent from this page. Fill in the form below and press the button again.';

/** One thing wrong with the payer's input: the input's name, and a message that starts with its label. */
export type FormProblem = { input: string; message: string };

export type PayerSubmission = {
  /** The amount the payer entered (variable-price links only), 10^8-scaled. */
  amount: bigint | null;
  collected: CollectedData;
};

export type ReadPayerForm = { ok: true; submission: PayerSubmission } | { ok: false; problems: FormProblem[] };

export const ADDRESS_INPUTS = [
  { part: 'line1', label: 'line 1', required: true, max: 200, autocomplete: 'address-line1' },
  { part: 'line2', label: 'line 2', required: false, max: 200, autocomplete: 'address-line2' },
  { part: 'city', label: 'city', required: true, max: 200, autocomplete: 'address-level2' },
  { part: 'state', label: 'state or region', required: false, max: 200, autocomplete: 'address-level1' },
  { part: 'postalCode', label: 'postal code', required: true, max: 20, autocomplete: 'postal-code' },
  { part: 'country', label: 'country', required: true, max: 2, autocomplete: 'country' },
] as const;

/** Input names of the page, so the form and its reader agree. */
export const INPUT = {
  amount: 'amount',
  /** A suggested amount's button, pressed without the page's script (the script fills `amount` in instead). */
  suggested: 'suggestedAmount',
  name: 'name',
  email: 'email',
  phone: 'phone',
  address: (kind: 'billing' | 'shipping', part: (typeof ADDRESS_INPUTS)[number]['part']) => `${kind}.${part}`,
  custom: (key: string) => `custom.${key}`,
} as const;

/**
 * The form as the payer meant it: a suggested amount pressed (the page without its script) is the
 * amount, over one typed, and is shown in the amount input if the form comes back refused.
 */
export function withPressedAmount(form: PayerForm): PayerForm {
  const { [INPUT.suggested]: pressed, ...rest } = form;
  return pressed === undefined ? form : { ...rest, [INPUT.amount]: pressed };
}

export const addressTitle = (kind: 'billing' | 'shipping') =>
  kind === 'billing' ? 'Billing address' : 'Shipping address';
// As the page around the message shows the bounds (`Between 1.00 USDC and 500.00 USDC`).
const money = (amount: bigint | string, currency: string) =>
  `${documentAmount(BigInt(amount))} ${currency.toUpperCase()}`;
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The problem with the length of a text or numeric answer, if any. */
function lengthProblem(length: number, bounds: LengthBounds, unit: 'character' | 'digit'): string | null {
  if (bounds.minimumLength !== null && length < bounds.minimumLength)
    return `must have at least ${plural(bounds.minimumLength, unit)}`;
  const max = bounds.maximumLength ?? (unit === 'character' ? MAX_ANSWER_LENGTH : null);
  if (max !== null && length > max) return `must have at most ${plural(max, unit)}`;
  return null;
}

function customFieldProblem(field: CustomField, value: string): string | null {
  if (value === '') return 'is required';
  switch (field.type) {
    case 'text':
      return lengthProblem(value.length, field.text, 'character');
    case 'numeric': {
      if (!DECIMAL.test(value)) return 'must be a number, such as 3 or 2.5';
      const { minimum, maximum } = field.numeric;
      if (minimum !== null && compareDecimals(value, minimum) < 0) return `must be at least ${minimum}`;
      if (maximum !== null && compareDecimals(value, maximum) > 0) return `must be at most ${maximum}`;
      return lengthProblem(digitCount(value), field.numeric, 'digit');
    }
    case 'dropdown':
      return field.dropdown.options.some((o) => o.value === value)
        ? null
        : `must be one of ${field.dropdown.options.map((o) => o.label).join(', ')}`;
  }
}

function answered(field: CustomField, value: string | null): AnsweredCustomField {
  switch (field.type) {
    case 'text':
      return { ...field, text: { ...field.text, value } };
    case 'numeric':
      return { ...field, numeric: { ...field.numeric, value } };
    case 'dropdown':
      return { ...field, dropdown: { ...field.dropdown, value } };
  }
}

/**
 * The problem with an amount the payer entered, parsed: none (null), 0, finer than the currency's
 * `decimals` (the finest of its assets the link may be paid in; null when none is offered, which
 * the session then refuses), or outside the link's bounds.
 */
function amountProblem(link: PaymentLink, amount: bigint, decimals: number | null): string | null {
  const { currency, minimumAmount: min, maximumAmount: max } = link;
  if (amount === 0n) return 'must be more than 0';
  if (decimals !== null && !isExactInDecimals(amount, decimals))
    return `must have at most ${plural(decimals, 'decimal')} for ${currency.toUpperCase()}`;
  if (min !== null && amount < BigInt(min)) return `must be at least ${money(min, currency)}`;
  if (max !== null && amount > BigInt(max)) return `must be at most ${money(max, currency)}`;
  return null;
}

/**
 * Check what a payer posted on a link's page against what the link asks for: the amount of a
 * variable-price link (a number as the dashboard's amount fields take it, payable in the currency's
 * `decimals`, within its bounds), name, email, phone, the required parts of each address, and every
 * custom field's rules. Every problem is reported, each naming its input.
 */
export function readPayerForm(link: PaymentLink, form: PayerForm, decimals: number | null = null): ReadPayerForm {
  const problems: FormProblem[] = [];
  const problem = (input: string, label: string, message: string) =>
    problems.push({ input, message: `${label}: ${message}` });
  const text = (input: string) => (form[input] ?? '').trim();
  /** A collected text input: trimmed and length-checked; '' when left empty or refused. */
  const required = (input: string, label: string, max: number, isRequired = true): string => {
    const value = text(input);
    if (value === '' && isRequired) problem(input, label, 'is required');
    else if (value.length > max) problem(input, label, `must be at most ${plural(max, 'character')}`);
    else return value;
    return '';
  };

  let amount: bigint | null = null;
  if (link.pricing === 'variable') {
    const raw = text(INPUT.amount);
    const parsed = raw === '' ? { error: 'is required' } : decimalAmount(raw);
    const wrong = 'error' in parsed ? parsed.error : amountProblem(link, BigInt(parsed.amount), decimals);
    if (wrong !== null) problem(INPUT.amount, 'Amount', wrong);
    else if ('amount' in parsed) amount = BigInt(parsed.amount);
  }

  const name = link.nameCollection ? required(INPUT.name, 'Name', 250) : '';
  const email = link.emailCollection ? required(INPUT.email, 'Email', 254) : '';
  if (email !== '' && !isEmail(email))
    problem(INPUT.email, 'Email', 'must be an email address, such as payer@example.com');
  const phone = link.phoneNumberCollection ? required(INPUT.phone, 'Phone', 40) : '';
  if (phone !== '' && !isPhone(phone)) problem(INPUT.phone, 'Phone', PHONE_HINT);

  const address = (kind: 'billing' | 'shipping'): CustomerAddress => {
    const parts = {} as CustomerAddress;
    for (const { part, label, required: isRequired, max } of ADDRESS_INPUTS) {
      const input = INPUT.address(kind, part);
      const value = required(input, `${addressTitle(kind)} ${label}`, max, isRequired);
      parts[part] = value === '' ? null : value;
    }
    if (parts.country !== null) {
      if (/^[A-Za-z]{2}$/.test(parts.country)) parts.country = parts.country.toUpperCase();
      else
        problem(
          INPUT.address(kind, 'country'),
          `${addressTitle(kind)} country`,
          'must be a two-letter country code, such as DE or US',
        );
    }
    return parts;
  };
  const billing = link.billingAddressCollection ? address('billing') : null;
  const shipping = link.shippingAddressCollection ? address('shipping') : null;

  const fields = link.customFields.fields.map((field) => {
    const input = INPUT.custom(field.key);
    const value = text(input);
    if (value === '' && field.optional) return answered(field, null);
    const wrong = customFieldProblem(field, value);
    if (wrong) problem(input, field.label.custom, wrong);
    return answered(field, value);
  });

  if (problems.length > 0) return { ok: false, problems };
  const orNull = (value: string) => (value === '' ? null : value);
  const nameOrNull = orNull(name);
  const asked = link.nameCollection || link.emailCollection || link.phoneNumberCollection || billing !== null;
  return {
    ok: true,
    submission: {
      amount,
      collected: {
        customerDetails: asked
          ? { name: nameOrNull, email: orNull(email), phone: orNull(phone), address: billing }
          : null,
        billingDetails: billing ? { name: nameOrNull, address: billing } : null,
        shippingDetails: shipping ? { name: nameOrNull, address: shipping } : null,
        customFields: fields.length > 0 ? { fields } : null,
      },
    },
  };
}
