import type { PropsWithChildren } from '@kitajs/html';

/**
 * Form controls beside `Field` (components.tsx): a select, a text area and a group of checkboxes,
 * each labelled, with its error under it and named by aria-describedby, kept as typed.
 */

type Described = { name: string; error?: string | null; hint?: string };

const describedBy = ({ name, error, hint }: Described): string | undefined => {
  const id = `field-${name}`;
  return [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
};

function Notes({ name, error, hint }: Described): JSX.Element {
  const id = `field-${name}`;
  return (
    <>
      {hint ? (
        <p class="hint" id={`${id}-hint`} safe>
          {hint}
        </p>
      ) : (
        ''
      )}
      {error ? (
        <p class="error" id={`${id}-error`} safe>
          {error}
        </p>
      ) : (
        ''
      )}
    </>
  );
}

export type Option = { value: string; label: string };

/** The frame of one labelled control: its label, the control, its hint and error. */
function Frame(props: PropsWithChildren<Described & { label: string }>): JSX.Element {
  const { children } = props;
  return (
    <div class={['field', props.error ? 'has-error' : '']}>
      <label for={`field-${props.name}`} safe>
        {props.label}
      </label>
      {children}
      <Notes {...props} />
    </div>
  );
}

export function SelectField(
  props: Described & { label: string; value: string; options: Option[]; required?: boolean },
): JSX.Element {
  return (
    <Frame {...props}>
      <select
        id={`field-${props.name}`}
        name={props.name}
        required={props.required}
        aria-invalid={props.error ? 'true' : undefined}
        aria-describedby={describedBy(props)}
      >
        {props.options.map((o) => (
          <option value={o.value} selected={o.value === props.value} safe>
            {o.label}
          </option>
        ))}
      </select>
    </Frame>
  );
}

export function TextAreaField(props: Described & { label: string; value: string; rows?: number }): JSX.Element {
  return (
    <Frame {...props}>
      <textarea
        id={`field-${props.name}`}
        name={props.name}
        rows={String(props.rows ?? 3)}
        aria-invalid={props.error ? 'true' : undefined}
        aria-describedby={describedBy(props)}
        safe
      >
        {props.value}
      </textarea>
    </Frame>
  );
}

/** Checkboxes of one name in a fieldset (its legend labels the group). */
export function CheckboxGroup(
  props: Described & { legend: string; options: Option[]; checked: readonly string[] },
): JSX.Element {
  return (
    <fieldset
      class={['checkbox-group', props.error ? 'has-error' : '']}
      id={`field-${props.name}`}
      aria-describedby={describedBy(props)}
    >
      <legend safe>{props.legend}</legend>
      {props.options.map((o, i) => (
        <label class="choice" for={`field-${props.name}-${i}`}>
          <input
            type="checkbox"
            id={`field-${props.name}-${i}`}
            name={props.name}
            value={o.value}
            checked={props.checked.includes(o.value)}
          />
          <span safe>{o.label}</span>
        </label>
      ))}
      <Notes {...props} />
    </fieldset>
  );
}
