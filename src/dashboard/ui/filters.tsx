import type { Children } from '@kitajs/html';

/** A labelled select with its error under it, kept as chosen (the Field of components.tsx, for a list of choices). */
export function SelectField(props: {
  name: string;
  label: string;
  value: string;
  options: readonly { value: string; label: string }[];
  error?: string | null;
}): JSX.Element {
  const id = `field-${props.name}`;
  return (
    <div class={['field', props.error ? 'has-error' : '']}>
      <label for={id} safe>
        {props.label}
      </label>
      <select
        id={id}
        name={props.name}
        aria-invalid={props.error ? 'true' : undefined}
        aria-describedby={props.error ? `${id}-error` : undefined}
      >
        {props.options.map((o) => (
          <option value={o.value} selected={o.value === props.value} safe>
            {o.label}
          </option>
        ))}
      </select>
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

/** A GET form of filters over a list: its fields in a row, Apply, and Clear back to `path`. */
export const FilterForm = ({
  path,
  label,
  children,
}: {
  path: string;
  label: string;
  children: Children;
}): JSX.Element => (
  <form method="get" action={path} class="filters" aria-label={label}>
    <div class="filters-fields">{children}</div>
    <div class="filters-actions">
      <button type="submit" class="button button-secondary">
        Apply
      </button>
      <a href={path} class="button button-quiet">
        Clear
      </a>
    </div>
  </form>
);

/** The query string of `params` with `page` set (and empty values left out). */
export function withPage(params: Record<string, string>, page: number): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value && key !== 'page') query.set(key, value);
  if (page > 1) query.set('page', String(page));
  const text = query.toString();
  return text ? `?${text}` : '';
}

/** "21–40 of 10,000" with links to the pages before and after (the filters kept). */
export function Pager(props: {
  path: string;
  params: Record<string, string>;
  page: number;
  pageSize: number;
  count: number;
}): JSX.Element {
  const { page, pageSize, count } = props;
  const first = count === 0 ? 0 : (page - 1) * pageSize + 1;
  const last = Math.min(count, page * pageSize);
  const pages = Math.max(1, Math.ceil(count / pageSize));
  return (
    <nav class="pager" aria-label="Pages">
      <span class="muted" safe>
        {count === 0
          ? 'Nothing to show'
          : `${first.toLocaleString('en')}–${last.toLocaleString('en')} of ${count.toLocaleString('en')}`}
      </span>
      <span class="pager-links">
        {page > 1 ? (
          <a class="button button-secondary" rel="prev" href={`${props.path}${withPage(props.params, page - 1)}`}>
            Previous
          </a>
        ) : (
          ''
        )}
        {page < pages ? (
          <a class="button button-secondary" rel="next" href={`${props.path}${withPage(props.params, page + 1)}`}>
            Next
          </a>
        ) : (
          ''
        )}
      </span>
    </nav>
  );
}

/** A fact's value: text (escaped), or markup built by the caller (a badge, a date). */
export type FactValue = string | (() => JSX.Element);

/** Label and value pairs, in a definition list. */
export const Facts = ({ items }: { items: readonly (readonly [string, FactValue])[] }): JSX.Element => (
  <dl class="facts-grid">
    {items.map(([term, value]) => (
      <div>
        <dt safe>{term}</dt>
        <dd>{typeof value === 'string' ? <span safe>{value}</span> : value()}</dd>
      </div>
    ))}
  </dl>
);
