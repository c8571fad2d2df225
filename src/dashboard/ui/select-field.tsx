/** A labelled select with its error under it, the chosen value kept: Field's pattern for a choice. */
export function SelectField(props: {
  name: string;
  label: string;
  options: readonly { value: string; label: string }[];
  value?: string | null;
  error?: string | null;
  hint?: string;
  /** A distinct id when the same name appears in several forms of a page. */
  id?: string;
  /** Label read by screen readers only (a select inside a table row). */
  hiddenLabel?: boolean;
}): JSX.Element {
  const id = props.id ?? `field-${props.name}`;
  const described = [props.hint ? `${id}-hint` : '', props.error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div class={['field', props.error ? 'has-error' : '', props.hiddenLabel ? 'field-inline' : '']}>
      <label for={id} class={props.hiddenLabel ? 'visually-hidden' : undefined} safe>
        {props.label}
      </label>
      <select
        id={id}
        name={props.name}
        aria-invalid={props.error ? 'true' : undefined}
        aria-describedby={described || undefined}
      >
        {props.options.map((option) => (
          <option value={option.value} selected={option.value === props.value} safe>
            {option.label}
          </option>
        ))}
      </select>
      {props.hint ? (
        <p class="hint" id={`${id}-hint`} safe>
          {props.hint}
        </p>
      ) : (
        ''
      )}
      {props.error ? (
        <p class="error" id={`${id}-error`} safe>
          {props.error}
        </p>
      ) : (
        ''
      )}
    </div>
  );
}
