import type { ApiAnswer } from '../../read-api/api-bridge.ts';
import { describedBy, Field, FieldFrame, FieldNotes } from './components.tsx';

/**
 * Form controls beside components.tsx's `Field` (a select, a text area, a checkbox, checkboxes and
 * radios of one name), each labelled, with its hint and error under it and kept as typed; and the
 * mapping of an API refusal onto a form's inputs, so every screen names the field the same way.
 */

/** Messages of a form by input name; `form` is shown above the form. */
export type FormErrors = Record<string, string>;

export type Option = { value: string; label: string };

/** A labelled select, the chosen value kept. */
export function SelectField(props: {
  name: string;
  label: string;
  options: readonly Option[];
  value?: string | null;
  error?: string | null;
  hint?: string;
  required?: boolean;
  /** A distinct id when the same name appears in several forms of a page. */
  id?: string;
  /** Label read by screen readers only (a select inside a table row). */
  hiddenLabel?: boolean;
}): JSX.Element {
  const id = props.id ?? `field-${props.name}`;
  return (
    <FieldFrame
      id={id}
      label={props.label}
      hint={props.hint}
      error={props.error}
      hiddenLabel={props.hiddenLabel}
      required={props.required}
    >
      <select
        id={id}
        name={props.name}
        required={props.required}
        aria-invalid={props.error ? 'true' : undefined}
        aria-describedby={describedBy(id, props.hint, props.error)}
      >
        {props.options.map((o) => (
          <option value={o.value} selected={o.value === (props.value ?? '')} safe>
            {o.label}
          </option>
        ))}
      </select>
    </FieldFrame>
  );
}

export function TextAreaField(props: {
  name: string;
  label: string;
  value?: string | null;
  error?: string | null;
  hint?: string;
  rows?: number;
}): JSX.Element {
  const id = `field-${props.name}`;
  return (
    <FieldFrame id={id} label={props.label} hint={props.hint} error={props.error}>
      <textarea
        id={id}
        name={props.name}
        rows={String(props.rows ?? 3)}
        aria-invalid={props.error ? 'true' : undefined}
        aria-describedby={describedBy(id, props.hint, props.error)}
        safe
      >
        {props.value ?? ''}
      </textarea>
    </FieldFrame>
  );
}

/** A checkbox with its label on the right; sends `value` (default "on") when ticked. */
export function CheckboxField(props: {
  name: string;
  label: string;
  checked?: boolean;
  value?: string;
  error?: string | null;
}): JSX.Element {
  const id = `field-${props.name}${props.value ? `-${props.value}` : ''}`;
  return (
    <div class={['field', props.error ? 'has-error' : '']}>
      <label class="choice" for={id}>
        <input
          type="checkbox"
          id={id}
          name={props.name}
          value={props.value ?? 'on'}
          checked={props.checked}
          aria-describedby={describedBy(id, undefined, props.error)}
        />
        <span safe>{props.label}</span>
      </label>
      <FieldNotes id={id} error={props.error} />
    </div>
  );
}

/** Checkboxes of one name in a fieldset (its legend labels the group). */
export function CheckboxGroup(props: {
  name: string;
  legend: string;
  options: readonly Option[];
  checked: readonly string[];
  error?: string | null;
  hint?: string;
}): JSX.Element {
  const id = `field-${props.name}`;
  return (
    <fieldset
      class={['checkbox-group', props.error ? 'has-error' : '']}
      id={id}
      aria-describedby={describedBy(id, props.hint, props.error)}
    >
      <legend safe>{props.legend}</legend>
      {props.options.map((o, i) => (
        <label class="choice" for={`${id}-${i}`}>
          <input
            type="checkbox"
            id={`${id}-${i}`}
            name={props.name}
            value={o.value}
            checked={props.checked.includes(o.value)}
          />
          <span safe>{o.label}</span>
        </label>
      ))}
      <FieldNotes id={id} hint={props.hint} error={props.error} />
    </fieldset>
  );
}

/** A radio group in a fieldset, its legend naming it. */
export function RadioGroup(props: {
  name: string;
  legend: string;
  options: (Option & { hint?: string })[];
  value: string;
  error?: string | null;
}): JSX.Element {
  return (
    <fieldset class={props.error ? 'has-error' : undefined}>
      <legend safe>{props.legend}</legend>
      {props.options.map((o) => (
        <label class="choice">
          <input type="radio" name={props.name} value={o.value} checked={o.value === props.value} />
          <span>
            <span safe>{o.label}</span>
            {o.hint ? (
              <span class="muted choice-hint" safe>
                {o.hint}
              </span>
            ) : (
              ''
            )}
          </span>
        </label>
      ))}
      {props.error ? (
        <p class="error" safe>
          {props.error}
        </p>
      ) : (
        ''
      )}
    </fieldset>
  );
}

/** The message of an API refusal, without the field path it starts with (the field shows it). */
export function refusalMessage(answer: ApiAnswer): string {
  const message = (answer.body as { message?: unknown } | null)?.message;
  const text = typeof message === 'string' ? message : `the request failed (HTTP ${answer.status})`;
  return answer.field && text.startsWith(`${answer.field}: `) ? text.slice(answer.field.length + 2) : text;
}

/**
 * An API refusal as the errors of a form: at the input `inputOf` maps the field path to, else
 * above the form with the path named.
 */
export function formErrorsOf(answer: ApiAnswer, inputOf: (field: string) => string | undefined): FormErrors {
  const input = answer.field ? inputOf(answer.field) : undefined;
  if (input) return { [input]: refusalMessage(answer) };
  const message = (answer.body as { message?: unknown } | null)?.message;
  return { form: typeof message === 'string' ? message : refusalMessage(answer) };
}

// The amount parser is shared with the hosted payment-link page, so both name a problem alike.
export { decimalAmount } from '../../shared/decimal.ts';

/**
 * Said beside every amount field: `1.500` meant as fifteen hundred is read as 1.5, and no form can
 * tell which was meant, so the merchant is told the one way amounts are written.
 */
export const AMOUNT_HINT = 'Use a dot for decimals and no thousands separators: 1500 or 12.50, not 1,500 or 1.500.';

/** An amount in currency units, read by `decimalAmount`: a `Field` with AMOUNT_HINT after its own hint. */
export function AmountField(props: {
  name: string;
  label: string;
  value?: string | null;
  error?: string | null;
  hint?: string;
}): JSX.Element {
  return (
    <Field
      name={props.name}
      label={props.label}
      value={props.value}
      error={props.error}
      inputmode="decimal"
      hint={props.hint ? `${props.hint} ${AMOUNT_HINT}` : AMOUNT_HINT}
    />
  );
}

/** A form's text value, trimmed; null when empty (left out of the API body). */
export const textOf = (form: URLSearchParams, name: string): string | null => {
  const value = form.get(name)?.trim() ?? '';
  return value === '' ? null : value;
};

/** Every value of a form as strings, to render it back as typed. */
export const valuesOf = (form: URLSearchParams): Record<string, string> => Object.fromEntries(form.entries());

/** What a transaction hash looks like on each kind of network, for the forms that ask for one. */
export const HASH_FORMATS =
  '0x and 64 hex digits (EVM); 64 hex digits, 0x optional (Tron); a base58 signature (Solana)';
