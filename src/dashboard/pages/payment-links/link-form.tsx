import { isBillingInterval } from '../../../../machines/billing-calendar.ts';
import type { z } from '../../../read-api/schema/fields.ts';
import type { PriceSchema } from '../../../read-api/schema/catalog.ts';
import { Alert, CsrfField, Field } from '../../ui/components.tsx';
import { CurrencyField } from '../../ui/currency-field.tsx';
import { priceLabel } from '../../ui/price-label.ts';
import { decimalAmountIn } from '../../../shared/decimal.ts';
import {
  AmountField,
  CheckboxField,
  type FormErrors,
  RadioGroup,
  SelectField,
  TextAreaField,
  textOf,
} from '../../ui/form-parts.tsx';
import type { Built } from '../../create-routes.ts';

/** The form's custom field rows (the API takes up to five; three cover what a payer should be asked). */
export const CUSTOM_FIELD_ROWS = 3;

export type Price = z.output<typeof PriceSchema>;

const COLLECTION = [
  ['nameCollection', 'Name'],
  ['emailCollection', 'Email address'],
  ['phoneNumberCollection', 'Phone number'],
  ['billingAddressCollection', 'Billing address'],
  ['shippingAddressCollection', 'Shipping address'],
] as const;

const FIELD_TYPES = [
  { value: 'text', label: 'Text' },
  { value: 'numeric', label: 'Number' },
  { value: 'dropdown', label: 'Dropdown' },
];

/** "Small=s, Large=l" (or "Small, Large") as dropdown options. */
const optionsOf = (text: string) =>
  text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const [label = '', value] = part.split('=').map((s) => s.trim());
      return { label, value: value ?? label.toLowerCase().replace(/[^a-z0-9]+/g, '_') };
    });

/** Where the API's field path is on this form (`customFields.fields[1].label.custom` → `cf1_label`). */
export function linkInputOf(field: string): string | undefined {
  const custom = /^customFields\.fields\[(\d+)\](?:\.(\w+))?/.exec(field);
  if (custom) {
    const part = custom[2];
    const input = part === 'dropdown' ? 'options' : part === 'type' || part === 'label' ? part : 'key';
    return `cf${custom[1]}_${input}`;
  }
  const head = field.replace(/\[\d+\].*$/, '').split('.')[0] ?? '';
  const inputs: Record<string, string> = {
    title: 'title',
    description: 'description',
    amount: 'amount',
    currency: 'currency',
    currencies: 'currency',
    preferredCurrency: 'currency',
    priceId: 'priceId',
    productId: 'priceId',
    pricing: 'pricing',
    minimumAmount: 'minimumAmount',
    maximumAmount: 'maximumAmount',
    suggestedAmounts: 'suggestedAmounts',
    afterCompletionRedirectUrl: 'redirectUrl',
    afterCompletionConfirmMsg: 'confirmMessage',
    afterCompletion: 'afterCompletion',
    submitType: 'submitType',
    image: 'image',
  };
  return inputs[head];
}

/** How the form reads one amount as typed: `decimalAmountIn` of the link's currency. */
type ReadAmount = (text: string) => { amount: string } | { error: string };

/**
 * Suggested amounts as typed, with commas or whitespace between them (`5, 10, 25`), each read as the
 * amount fields read one (`read`); or the first bad one named with its problem. A comma between digits
 * with three after it (`1,500`) may be a thousands separator or two amounts: refused, not guessed.
 */
export function suggestedAmountsOf(text: string, read: ReadAmount): { amounts: string[] } | { error: string } {
  const grouped = /[0-9.]*[0-9],[0-9]{3}(?![0-9])/.exec(text);
  if (grouped)
    return {
      error: `${grouped[0]} may be one amount with a thousands separator or two amounts: write amounts without separators (${grouped[0].replace(',', '')}) and put a space after each comma (${grouped[0].replace(',', ', ')})`,
    };
  const amounts: string[] = [];
  const typed: string[] = [];
  for (const piece of text.split(/[\s,]+/).filter(Boolean)) {
    const parsed = read(piece);
    if ('error' in parsed) return { error: `${piece}: ${parsed.error}` };
    const earlier = amounts.indexOf(parsed.amount);
    if (earlier !== -1) return { error: `${piece} repeats ${typed[earlier]}: give each amount once` };
    amounts.push(parsed.amount);
    typed.push(piece);
  }
  return { amounts };
}

/**
 * The create body of the form as typed; amounts in currency units become the API's integers here,
 * each refused at its input when it has more decimals than the currency carries (`decimalsOf`, see
 * `decimalsIn`), as the product price form refuses them.
 */
export function linkBodyOf(form: URLSearchParams, decimalsOf: (currency: string) => number | null): Built {
  const errors: FormErrors = {};
  const currency = form.get('currency') ?? 'usdc';
  const read: ReadAmount = (text) => decimalAmountIn(text, currency, decimalsOf(currency));
  const amountAt = (input: string): string | undefined => {
    const text = textOf(form, input);
    if (text === null) return undefined;
    const parsed = read(text);
    if ('error' in parsed) errors[input] = parsed.error;
    return 'amount' in parsed ? parsed.amount : undefined;
  };
  const pricing = form.get('pricing') ?? 'fixed';
  const body: Record<string, unknown> = { title: form.get('title') ?? '', pricing };
  const description = textOf(form, 'description');
  if (description) body.description = description;
  if (pricing === 'subscription') {
    const priceId = textOf(form, 'priceId');
    if (priceId) body.priceId = priceId;
  } else {
    body.currencies = [currency];
  }
  if (pricing === 'fixed') body.amount = amountAt('amount');
  if (pricing === 'variable') {
    body.minimumAmount = amountAt('minimumAmount');
    body.maximumAmount = amountAt('maximumAmount');
    const suggested = suggestedAmountsOf(form.get('suggestedAmounts') ?? '', read);
    if ('error' in suggested) errors.suggestedAmounts = suggested.error;
    else body.suggestedAmounts = suggested.amounts;
  }
  // Only what is ticked is sent: the API's defaults stand for the rest (a subscription always asks for the email).
  for (const [key] of COLLECTION) if (form.has(key)) body[key] = true;
  const fields = [];
  for (let i = 0; i < CUSTOM_FIELD_ROWS; i++) {
    const key = textOf(form, `cf${i}_key`);
    const label = textOf(form, `cf${i}_label`);
    if (key === null && label === null) continue;
    const type = form.get(`cf${i}_type`) ?? 'text';
    fields.push({
      key: key ?? '',
      type,
      label: { type: 'custom', custom: label ?? '' },
      optional: form.has(`cf${i}_optional`),
      ...(type === 'dropdown' ? { dropdown: { options: optionsOf(form.get(`cf${i}_options`) ?? '') } } : {}),
    });
  }
  body.customFields = { fields };
  body.afterCompletion = form.get('afterCompletion') === 'redirect' ? 'redirect' : 'hosted_confirmation';
  if (body.afterCompletion === 'redirect') body.afterCompletionRedirectUrl = form.get('redirectUrl')?.trim() ?? '';
  else {
    const message = textOf(form, 'confirmMessage');
    if (message) body.afterCompletionConfirmMsg = message;
  }
  body.submitType = form.get('submitType') ?? 'pay';
  body.type = form.has('singleUse') ? 'one_time' : 'multiple';
  body.allowPromotionCodes = form.has('allowPromotionCodes');
  return Object.keys(errors).length > 0 ? { errors } : { body };
}

/** The create form; `values` as typed (or the defaults), each error at its input. */
export function LinkForm(props: {
  csrf: string;
  values: Record<string, string>;
  errors: FormErrors;
  /** The catalog's recurring prices: only those a subscription can bill (by the month or the year) are offered. */
  recurringPrices: Price[];
  /** Those a wallet of the merchant receives (`currenciesOf`). */
  currencies: readonly string[];
  /** What the amounts may have in each currency (`decimalsHint`). */
  decimalsHint?: string;
}): JSX.Element {
  const { values: v, errors: e } = props;
  const checked = (name: string) => v[name] !== undefined;
  // A weekly or daily price would make a link whose page takes no payer: the API refuses it.
  const plans = props.recurringPrices.filter((p) => isBillingInterval(p.interval));
  return (
    <form method="post" action="/dashboard/payment-links" novalidate class="stack-form">
      <CsrfField token={props.csrf} />
      {e.form ? (
        <Alert tone="danger">
          <span safe>{e.form}</span>
        </Alert>
      ) : (
        ''
      )}
      <Field
        name="title"
        label="Title"
        value={v.title}
        error={e.title}
        hint="What the payer sees as the heading."
        required
      />
      <TextAreaField name="description" label="Description" value={v.description} error={e.description} rows={2} />
      <RadioGroup
        name="pricing"
        legend="Price"
        value={v.pricing ?? 'fixed'}
        error={e.pricing}
        options={[
          { value: 'fixed', label: 'Fixed price', hint: 'Every payer pays the same amount.' },
          { value: 'variable', label: 'Customer chooses', hint: 'The payer enters the amount, within your limits.' },
          { value: 'subscription', label: 'Subscription', hint: 'A recurring price from your catalog.' },
        ]}
      />
      <fieldset>
        <legend>Amount</legend>
        <div class="form-row">
          <CurrencyField
            offered={props.currencies}
            value={v.currency}
            error={e.currency}
            hint="Fixed and customer-chosen prices."
            required
          />
          <AmountField
            name="amount"
            label="Amount"
            value={v.amount}
            error={e.amount}
            hint="Required for a fixed price."
          />
        </div>
        <div class="form-row">
          <AmountField name="minimumAmount" label="Minimum amount" value={v.minimumAmount} error={e.minimumAmount} />
          <AmountField name="maximumAmount" label="Maximum amount" value={v.maximumAmount} error={e.maximumAmount} />
        </div>
        {props.decimalsHint ? (
          <p class="muted small" safe>
            {props.decimalsHint}
          </p>
        ) : (
          ''
        )}
        <Field
          name="suggestedAmounts"
          label="Suggested amounts"
          value={v.suggestedAmounts}
          error={e.suggestedAmounts}
          hint="Customer-chosen price: up to five, separated by commas or spaces, such as 5, 10, 25."
        />
        <SelectField
          name="priceId"
          label="Recurring price"
          value={v.priceId}
          error={e.priceId}
          hint={
            plans.length === 0
              ? 'Required for a subscription: add a recurring price billed by the month or the year to a product first.'
              : 'Required for a subscription.'
          }
          options={[
            { value: '', label: 'None' },
            ...plans.map((p) => ({
              value: p.id,
              label: `${p.product?.name ?? 'Product'}: ${priceLabel(p)}`,
            })),
          ]}
        />
      </fieldset>
      <fieldset>
        <legend>Ask the payer for</legend>
        <div class="check-grid">
          {COLLECTION.map(([name, label]) => (
            <CheckboxField name={name} label={label} checked={checked(name)} />
          ))}
        </div>
        <p class="muted small">A subscription always asks for the email address, to send its invoices.</p>
      </fieldset>
      <fieldset>
        <legend>Custom fields</legend>
        <p class="muted small">Questions of your own. Dropdown options: “Small=s, Large=l”.</p>
        {Array.from({ length: CUSTOM_FIELD_ROWS }, (_, i) => (
          <div class="custom-field-row">
            <Field name={`cf${i}_key`} label={`Field ${i + 1} key`} value={v[`cf${i}_key`]} error={e[`cf${i}_key`]} />
            <Field
              name={`cf${i}_label`}
              label={`Field ${i + 1} label`}
              value={v[`cf${i}_label`]}
              error={e[`cf${i}_label`]}
            />
            <SelectField
              name={`cf${i}_type`}
              label={`Field ${i + 1} type`}
              value={v[`cf${i}_type`] ?? 'text'}
              error={e[`cf${i}_type`]}
              options={FIELD_TYPES}
            />
            <Field
              name={`cf${i}_options`}
              label={`Field ${i + 1} options`}
              value={v[`cf${i}_options`]}
              error={e[`cf${i}_options`]}
            />
            <CheckboxField name={`cf${i}_optional`} label="Optional" checked={checked(`cf${i}_optional`)} />
          </div>
        ))}
      </fieldset>
      <RadioGroup
        name="afterCompletion"
        legend="After payment"
        value={v.afterCompletion ?? 'hosted_confirmation'}
        error={e.afterCompletion}
        options={[
          { value: 'hosted_confirmation', label: 'Show a confirmation message' },
          { value: 'redirect', label: 'Send the payer to your site' },
        ]}
      />
      <div class="form-row">
        <Field name="confirmMessage" label="Confirmation message" value={v.confirmMessage} error={e.confirmMessage} />
        <Field
          name="redirectUrl"
          label="Redirect URL"
          type="url"
          value={v.redirectUrl}
          error={e.redirectUrl}
          hint="Required when the payer is sent to your site: https://…"
        />
      </div>
      <div class="form-row">
        <SelectField
          name="submitType"
          label="Button"
          value={v.submitType ?? 'pay'}
          error={e.submitType}
          options={[
            { value: 'pay', label: 'Pay' },
            { value: 'book', label: 'Book' },
            { value: 'donate', label: 'Donate' },
          ]}
        />
      </div>
      <CheckboxField
        name="allowPromotionCodes"
        label="Allow promotion codes"
        checked={checked('allowPromotionCodes')}
      />
      <CheckboxField name="singleUse" label="Single use (closes after one payment)" checked={checked('singleUse')} />
      <div class="form-actions">
        <button type="submit" class="button-primary">
          Create payment link
        </button>
        <a class="button-secondary" href="/dashboard/payment-links">
          Cancel
        </a>
      </div>
    </form>
  );
}
