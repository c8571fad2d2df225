import type { DashboardContext } from '../../context.ts';
import { Alert, Card, CsrfField, Field, TableScroll } from '../../ui/components.tsx';
import { CurrencyField } from '../../ui/currency-field.tsx';
import { AMOUNT_HINT, CheckboxGroup, type Option, SelectField, TextAreaField } from '../../ui/form-parts.tsx';
import { AppLayout } from '../../ui/layout.tsx';
import { type FormErrors, INTERVALS, type InvoiceForm, MAX_ROWS, taxNoteOf } from './invoice-form.ts';

/**
 * What the editor offers to pick from: customers, catalog prices, currencies and networks (those a
 * wallet of the merchant receives; `payable` false for the others).
 */
export type EditorChoices = {
  customers: Option[];
  prices: Option[];
  currencies: readonly string[];
  /** What the amounts' hint says of each currency's decimals (`decimalsHint`). */
  decimalsHint: string;
  networks: (Option & { payable: boolean })[];
  /** The tenant's tax rates as a line's note names them (`VAT 5%`), by id. */
  taxRates: ReadonlyMap<string, string>;
};

/** The payable networks, and any other the invoice already names, marked, so saving keeps it as it is. */
const networkOptions = (networks: EditorChoices['networks'], checked: readonly string[]): Option[] =>
  networks
    .filter((n) => n.payable || checked.includes(n.value))
    .map((n) => ({ value: n.value, label: n.payable ? n.label : `${n.label} (no wallet)` }));

/** The message of one input, the others' errors left out. */
const errorOf = (errors: FormErrors, name: string): string | null => errors[name] ?? null;

type LineCell = { name: string; id: string; error: string | null; invalid: 'true' | undefined };

/** One text input of a line, in its cell, labelled for screen readers (and shown on a phone). */
function LineInput(props: {
  cell: LineCell;
  label: string;
  value: string;
  inputmode?: string;
  placeholder?: string;
  class?: string;
  /** The id of a hint said once for the column (the amounts'). */
  hint?: string;
}): JSX.Element {
  const { cell } = props;
  return (
    <td class={props.inputmode ? 'amount' : undefined}>
      <label class="visually-hidden" for={cell.id} safe>
        {props.label}
      </label>
      <input
        id={cell.id}
        name={cell.name}
        value={props.value}
        inputmode={props.inputmode}
        placeholder={props.placeholder}
        class={props.class}
        aria-invalid={cell.invalid}
        aria-describedby={[props.hint, cell.error ? `${cell.id}-error` : ''].filter(Boolean).join(' ') || undefined}
      />
    </td>
  );
}

/** The id of the amount column's hint (AMOUNT_HINT, said once under the table). */
const LINE_AMOUNT_HINT = 'line-amount-hint';

/**
 * The line rows of the editor, each error under its row; the amount hint once under the table. A
 * line's own tax rates ride in hidden fields with the line they were set for, and are said under its
 * product (`taxRates`: their names by id), so a line taxed unlike the invoice is seen as such.
 */
export function LineRows({
  form,
  errors,
  prices,
  taxRates = new Map(),
  decimalsHint = '',
}: {
  form: InvoiceForm;
  errors: FormErrors;
  prices: Option[];
  taxRates?: ReadonlyMap<string, string>;
  decimalsHint?: string;
}) {
  const priceOptions = [{ value: '', label: 'Ad hoc: name and amount' }, ...prices];
  return (
    <>
      <TableScroll label="The invoice's lines, to edit">
        <table class="line-editor">
          <thead>
            <tr>
              <th>Product or price</th>
              <th>Name (ad hoc)</th>
              <th class="amount">Amount</th>
              <th class="amount">Quantity</th>
            </tr>
          </thead>
          <tbody>
            {form.lines.map((row, i) => {
              const cell = (key: 'price' | 'name' | 'amount' | 'quantity'): LineCell => {
                const name = `line-${i}-${key}`;
                const error = errorOf(errors, name);
                return { name, id: `field-${name}`, error, invalid: error ? 'true' : undefined };
              };
              const price = cell('price');
              const name = cell('name');
              const amount = cell('amount');
              const quantity = cell('quantity');
              const rowErrors = [price, name, amount, quantity].filter((c) => c.error);
              const taxNote = taxNoteOf(row, taxRates);
              const taxNoteId = `${price.id}-tax`;
              return (
                <>
                  <tr class={rowErrors.length > 0 ? 'has-error' : ''}>
                    <td>
                      {row.taxRateIds ? (
                        <>
                          <input type="hidden" name={`line-${i}-taxRateIds`} value={row.taxRateIds.join(',')} />
                          <input type="hidden" name={`line-${i}-taxedLine`} value={row.taxedLine ?? ''} />
                        </>
                      ) : (
                        ''
                      )}
                      <label class="visually-hidden" for={price.id} safe>
                        {`Line ${i + 1} product or price`}
                      </label>
                      <select
                        id={price.id}
                        name={price.name}
                        aria-invalid={price.invalid}
                        aria-describedby={
                          [taxNote ? taxNoteId : '', price.error ? `${price.id}-error` : '']
                            .filter(Boolean)
                            .join(' ') || undefined
                        }
                      >
                        {priceOptions.map((o) => (
                          <option value={o.value} selected={o.value === row.price} safe>
                            {o.label}
                          </option>
                        ))}
                      </select>
                      {taxNote ? (
                        <p class="line-tax muted" id={taxNoteId} safe>
                          {taxNote}
                        </p>
                      ) : (
                        ''
                      )}
                    </td>
                    <LineInput cell={name} label={`Line ${i + 1} name`} value={row.name} />
                    <LineInput
                      cell={amount}
                      label={`Line ${i + 1} amount`}
                      value={row.amount}
                      inputmode="decimal"
                      placeholder="0.00"
                      hint={LINE_AMOUNT_HINT}
                    />
                    <LineInput
                      cell={quantity}
                      label={`Line ${i + 1} quantity`}
                      value={row.quantity}
                      inputmode="numeric"
                      class="quantity"
                    />
                  </tr>
                  {rowErrors.length > 0 ? (
                    <tr class="row-error">
                      <td colspan="4">
                        {rowErrors.map((c) => (
                          <p class="error" id={`${c.id}-error`} safe>
                            {`Line ${i + 1}: ${c.error}`}
                          </p>
                        ))}
                      </td>
                    </tr>
                  ) : (
                    ''
                  )}
                </>
              );
            })}
          </tbody>
        </table>
      </TableScroll>
      {/* After the wrapper, which bleeds to the card's edge: inside it, the hint ran into that edge. */}
      <p class="hint" id={LINE_AMOUNT_HINT} safe>
        {`Amounts: ${AMOUNT_HINT}${decimalsHint ? ` ${decimalsHint}` : ''}`}
      </p>
    </>
  );
}

/**
 * The draft editor: a form that works without JavaScript. "Add line" posts it back and shows it
 * again with one more row; "Save draft" creates or updates the draft through the API.
 */
export function InvoiceEditor(props: {
  ctx: DashboardContext;
  title: string;
  action: string;
  cancel: string;
  form: InvoiceForm;
  errors: FormErrors;
  choices: EditorChoices;
}): JSX.Element {
  const { ctx, form, errors, choices } = props;
  const customerOptions = [{ value: '', label: 'New customer (type the email below)' }, ...choices.customers];
  return (
    <AppLayout ctx={ctx} title={props.title} screen="invoices">
      <form method="post" action={props.action} class="invoice-editor" novalidate>
        <CsrfField token={ctx.state.csrfToken} />
        <input type="hidden" name="rows" value={String(form.lines.length)} />
        <input type="hidden" name="daysUntilDueWas" value={form.daysUntilDueWas} />
        {form.assetIds.map((id) => (
          <input type="hidden" name="assetId" value={id} />
        ))}
        {Object.keys(errors).length > 0 ? (
          <Alert tone="danger">
            <p safe>{errors.form ?? 'The invoice was not saved: correct the fields marked below.'}</p>
          </Alert>
        ) : (
          ''
        )}
        <Card title="Bill to" id="editor-customer">
          <div class="grid grid-2 tight">
            <SelectField
              name="customerId"
              label="Customer"
              value={form.customerId}
              options={customerOptions}
              error={errorOf(errors, 'customerId')}
            />
            <Field
              name="customerEmail"
              label="Or a new customer's email"
              type="email"
              value={form.customerEmail}
              autocomplete="off"
              hint="Used when no customer is picked; an existing customer with this email is reused."
              error={errorOf(errors, 'customerEmail')}
            />
          </div>
        </Card>
        <Card title="Lines" id="editor-lines">
          <p class="muted hint-line">
            Pick a product's price, or leave the product on "Ad hoc" and type a name and an amount in the invoice's
            currency. Blank rows are left out.
          </p>
          {errors.lines ? (
            <p class="error" role="alert" safe>
              {errors.lines}
            </p>
          ) : (
            ''
          )}
          {form.lines.some((row) => taxNoteOf(row, choices.taxRates)) ? (
            <p class="muted hint-line">
              A line's own tax, set through the API, is shown under its product. It stays with that product (or that
              name and amount); a line put in its place takes the invoice's tax.
            </p>
          ) : (
            ''
          )}
          <LineRows
            form={form}
            errors={errors}
            prices={choices.prices}
            taxRates={choices.taxRates}
            decimalsHint={choices.decimalsHint}
          />
          <div class="editor-row-actions">
            <button
              type="submit"
              name="intent"
              value="add-line"
              class="button-secondary"
              disabled={form.lines.length >= MAX_ROWS}
            >
              Add line
            </button>
          </div>
        </Card>
        <Card title="Terms" id="editor-terms">
          <div class="grid grid-2 tight">
            <Field
              name="number"
              label="Invoice number"
              value={form.number}
              hint="Leave blank for the next number."
              error={errorOf(errors, 'number')}
            />
            <Field
              name="daysUntilDue"
              label="Due in (days)"
              value={form.daysUntilDue}
              error={errorOf(errors, 'daysUntilDue')}
            />
            <CurrencyField
              offered={choices.currencies}
              value={form.currency}
              hint="Of the ad hoc lines; a product's price has its own."
              error={errorOf(errors, 'currency')}
            />
            <SelectField
              name="interval"
              label="Repeats"
              value={form.interval}
              options={INTERVALS.map((i) => ({ value: i.value, label: i.label }))}
              error={errorOf(errors, 'interval')}
            />
          </div>
          <CheckboxGroup
            name="chainId"
            legend="Accepted networks"
            options={networkOptions(choices.networks, form.chainIds)}
            checked={form.chainIds}
            hint="None ticked: every network you accept."
            error={errorOf(errors, 'chainId')}
          />
        </Card>
        <Card title="Notes" id="editor-notes">
          <TextAreaField name="memo" label="Memo" value={form.memo} error={errorOf(errors, 'memo')} />
          <TextAreaField name="footer" label="Footer" value={form.footer} error={errorOf(errors, 'footer')} />
        </Card>
        <div class="form-actions">
          <a class="button-secondary" href={props.cancel}>
            Cancel
          </a>
          <button type="submit" name="intent" value="save" class="button-primary">
            Save draft
          </button>
        </div>
      </form>
    </AppLayout>
  );
}
