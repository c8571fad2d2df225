/**
 * What a list screen puts around its table: a status filter as links (works without JavaScript,
 * the current one marked) and page links under it.
 */

/** `path` with `query`, leaving out the empty values. */
export function withQuery(path: string, query: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query))
    if (value !== undefined && value !== '' && value !== 1) params.set(key, String(value));
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

export function StatusFilter(props: {
  path: string;
  label: string;
  current: string;
  statuses: readonly { value: string; label: string }[];
}): JSX.Element {
  return (
    <nav class="status-filter" aria-label={props.label}>
      <ul>
        {[{ value: '', label: 'All' }, ...props.statuses].map((s) => (
          <li>
            <a
              href={withQuery(props.path, { status: s.value })}
              aria-current={s.value === props.current ? 'page' : undefined}
              safe
            >
              {s.label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/** "Page 2 of 5" with previous and next links; nothing when everything fits on one page. */
export function Pager(props: {
  path: string;
  query: Record<string, string>;
  page: number;
  limit: number;
  count: number;
}): JSX.Element {
  const pages = Math.max(1, Math.ceil(props.count / props.limit));
  if (pages === 1) return <></>;
  const link = (page: number) => withQuery(props.path, { ...props.query, page });
  return (
    <nav class="pager" aria-label="Pages">
      {props.page > 1 ? (
        <a class="button-secondary" href={link(props.page - 1)} rel="prev">
          Previous
        </a>
      ) : (
        ''
      )}
      <span class="muted" safe>
        {`Page ${props.page} of ${pages}`}
      </span>
      {props.page < pages ? (
        <a class="button-secondary" href={link(props.page + 1)} rel="next">
          Next
        </a>
      ) : (
        ''
      )}
    </nav>
  );
}

/** A page number from the query: a positive integer, else 1. */
export const pageOf = (raw: unknown): number => {
  const n = typeof raw === 'string' && /^[1-9][0-9]{0,6}$/.test(raw) ? Number(raw) : 1;
  return n;
};
