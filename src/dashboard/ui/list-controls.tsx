import type { Children } from '@kitajs/html';
import { instantRange, parseIsoInstant, rangeCondition } from '../../read-api/instant-range.ts';
import { Alert } from './components.tsx';

/**
 * What a list screen puts around its table: filters (a GET form, or a status filter as links: both
 * work without JavaScript) and page links under it, the filters kept from page to page.
 */

/** `path` with `query` as its query string, empty values and page 1 left out. */
export function withQuery(path: string, query: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query))
    if (value !== undefined && value !== '' && !(key === 'page' && Number(value) === 1)) params.set(key, String(value));
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

/** A page number from the query: a positive integer, else 1. */
export const pageOf = (raw: unknown): number =>
  typeof raw === 'string' && /^[1-9][0-9]{0,6}$/.test(raw) ? Number(raw) : 1;

/** A list's query string as Koa reads it. */
export type ListQuery = Record<string, string | string[] | undefined>;

/** One filter of the query as typed, trimmed (the last when given twice); '' when absent. */
export const queryValue = (query: ListQuery, name: string): string => {
  const value = query[name];
  return (Array.isArray(value) ? value.at(-1) : value)?.trim() ?? '';
};

/**
 * Names the month of a date as typed (no instant, so not the dashboard's zone): the date is built at
 * UTC midnight, and read in UTC it stays that calendar day, where a zone west of UTC would name the month before.
 */
const MONTH = new Intl.DateTimeFormat('en-GB', { month: 'long', year: 'numeric', timeZone: 'UTC' });

/**
 * Why a date filter cannot be used, or null: one in the form YYYY-MM-DD that names no day (2026-11-31)
 * is told as such, not asked for the form it has.
 */
function dateProblem(value: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return 'Enter a date as YYYY-MM-DD.';
  if (!Number.isNaN(parseIsoInstant(value))) return null;
  const [year, month] = value.split('-').map(Number) as [number, number];
  if (month < 1 || month > 12) return `${value} does not exist: months are 01 to 12.`;
  // setUTCFullYear, not Date.UTC: years 0 to 99 stay themselves.
  const last = new Date(0);
  last.setUTCFullYear(year, month, 0);
  return `${value} does not exist: ${MONTH.format(last)} has ${last.getUTCDate()} days.`;
}

/** The message of each end of a date range (`from`, `to` as YYYY-MM-DD) that cannot be used. */
export function dateRangeErrors(range: { from: string; to: string }): { from?: string; to?: string } {
  const errors: { from?: string; to?: string } = {};
  for (const name of ['from', 'to'] as const) {
    const problem = range[name] ? dateProblem(range[name]) : null;
    if (problem) errors[name] = problem;
  }
  if (!errors.from && !errors.to && range.from && range.to && range.from > range.to)
    errors.to = 'The end date is before the start date.';
  return errors;
}

/**
 * The read-store condition of a list's date filters that are valid: from `from`'s midnight (UTC, or in
 * `zone`) through the whole of `to`'s day, as the reports read a date alone; `{}` when neither applies.
 */
export function dayRangeCondition(
  range: { from: string; to: string },
  errors: { from?: string; to?: string },
  zone?: string,
): Record<string, string> {
  return rangeCondition(
    instantRange({ from: errors.from ? undefined : range.from, to: errors.to ? undefined : range.to }, zone),
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

/**
 * A list's `?status=` among `statuses`; one naming none of them is no filter: the list shows every
 * record and `error` says so (the page answers 400, as the sessions list does a bad filter), never
 * an unfiltered list that reads as filtered. Own keys only: `?status=constructor` is no status.
 */
export function statusFilterOf(
  query: ListQuery,
  statuses: Record<string, unknown>,
  records: string,
): { status: string; error: string | null } {
  const asked = queryValue(query, 'status');
  if (!asked || Object.hasOwn(statuses, asked)) return { status: asked, error: null };
  return {
    status: '',
    error: `There is no status "${asked}". Pick a status: ${Object.keys(statuses).join(', ')}. Showing all ${records}.`,
  };
}

/** A status filter as links, "All" first, the current one marked; `error` (see statusFilterOf) above it. */
export function StatusFilter(props: {
  path: string;
  label: string;
  current: string;
  statuses: readonly { value: string; label: string }[];
  error?: string | null;
}): JSX.Element {
  return (
    <>
      {props.error ? (
        <Alert tone="danger">
          <span safe>{props.error}</span>
        </Alert>
      ) : (
        ''
      )}
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
    </>
  );
}

/** "21–40 of 10,000" with links to the pages before and after (the filters in `params` kept). */
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
  const link = (to: number) => withQuery(props.path, { ...props.params, page: to });
  // An empty first page has its list's own empty message above: a second "Nothing to show" said it twice.
  if (count === 0 && page === 1) return '';
  return (
    <nav class="pager" aria-label="Pages">
      <span class="muted" safe>
        {count === 0
          ? 'Nothing on this page'
          : `${first.toLocaleString('en')}–${last.toLocaleString('en')} of ${count.toLocaleString('en')}`}
      </span>
      <span class="pager-links">
        {page > 1 ? (
          <a class="button button-secondary" rel="prev" href={link(page - 1)}>
            Previous
          </a>
        ) : (
          ''
        )}
        {page < pages ? (
          <a class="button button-secondary" rel="next" href={link(page + 1)}>
            Next
          </a>
        ) : (
          ''
        )}
      </span>
    </nav>
  );
}
