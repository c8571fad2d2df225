import type { Collection, Filter, ReadDocument } from '../read-store/read-store.ts';
import { ValidationError } from '../shared/errors.ts';
import type { ApiContext } from './api-context.ts';

const DATE_OPS = ['gt', 'gte', 'lt', 'lte'] as const;

export function positiveInt(raw: string | undefined, name: string, fallback: number, max?: number): number {
  if (raw === undefined || raw === '') return fallback;
  if (!/^[0-9]+$/.test(raw)) throw new ValidationError(name, 'must be a positive integer');
  const n = Number(raw);
  if (n < 1) throw new ValidationError(name, 'must be at least 1');
  if (max !== undefined && n > max) throw new ValidationError(name, `must be at most ${max}`);
  return n;
}

/** Every value given for `name`, spelt `name` or `name[]`, repeated or not. */
const queryValues = (ctx: ApiContext, name: string): string[] =>
  [ctx.query[name], ctx.query[`${name}[]`]].flatMap((v) => (v === undefined ? [] : Array.isArray(v) ? v : [v]));

/** The last value given for `name` (either spelling). */
export const queryValue = (ctx: ApiContext, name: string): string | undefined => queryValues(ctx, name).at(-1);

/** A comma-separated filter's values (`ids=a,b`, `ids=a&ids=b`, `ids[]=a&ids[]=b` alike), or undefined when not given. */
export function csvQuery(ctx: ApiContext, name: string): string[] | undefined {
  const given = queryValues(ctx, name);
  if (given.length === 0) return undefined;
  return given
    .flatMap((v) => v.split(','))
    .map((s) => s.trim())
    .filter(Boolean);
}

/** An ISO 8601 date (`2026-05-01`) or timestamp (`2026-05-01T08:00:00Z`, offset optional). */
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * The instant an ISO 8601 bound names, or NaN. `Date.parse` alone would also take forms such as
 * `March 3` or `1`, and reads a timestamp without an offset in the server's time zone; here only
 * ISO 8601 is accepted and a timestamp without an offset is UTC, like a bare date.
 */
export function parseIsoInstant(raw: string): number {
  const match = ISO_DATE.exec(raw);
  if (!match) return Number.NaN;
  const [, year, month, day, hour, minute, second, offset] = match;
  const daysInMonth = new Date(Date.UTC(Number(year), Number(month), 0)).getUTCDate();
  // Date.parse would roll 2026-02-31 over to March 3.
  if (Number(month) < 1 || Number(month) > 12 || Number(day) < 1 || Number(day) > daysInMonth) return Number.NaN;
  if (hour !== undefined && (Number(hour) > 23 || Number(minute) > 59 || Number(second ?? 0) > 59)) return Number.NaN;
  const time = Date.parse(hour !== undefined && offset === undefined ? `${raw}Z` : raw);
  // Bounds are compared as ISO strings: an offset carrying one past year 9999 or before 0000 would
  // be `+010000-…` or `-000001-…`, which sort before every stored time.
  return time >= MIN_INSTANT && time <= MAX_INSTANT ? time : Number.NaN;
}

const MIN_INSTANT = Date.parse('0000-01-01T00:00:00Z');
const MAX_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

/** `createdAt[gt]=…` (or `createdAt.gt`) style date bounds on `field`, checked as ISO 8601. */
function dateRangeFilter(ctx: ApiContext, field: string): Filter {
  const range: Record<string, string> = {};
  for (const op of DATE_OPS) {
    const raw = queryValue(ctx, `${field}[${op}]`) ?? queryValue(ctx, `${field}.${op}`);
    if (raw === undefined) continue;
    const time = parseIsoInstant(raw);
    if (Number.isNaN(time))
      throw new ValidationError(
        `${field}[${op}]`,
        'must be an ISO 8601 date or timestamp, such as 2026-05-01 or 2026-05-01T08:00:00Z',
      );
    range[`$${op}`] = new Date(time).toISOString();
  }
  return Object.keys(range).length ? { [field]: range } : {};
}

export type ListFilters = Record<
  string,
  { field?: string; values?: readonly string[]; kind?: 'string' | 'boolean' | 'csv' | 'number' }
>;

/** The reference's `visibility` filter: 10 (shown in the dashboard) or 20 (API only), stored as a number. */
export const VISIBILITY_FILTER = { values: ['10', '20'], kind: 'number' } as const;

/**
 * The tenant's filter a list route's query asks for: `createdAt[…]` (and other date bounds) and
 * the resource's own filters, checked (a 400 naming the parameter). Shared by lists and exports.
 */
export function listFilter(
  ctx: ApiContext,
  options: { filters?: ListFilters; base?: Filter; dateFields?: string[] },
): Filter {
  const { tenant } = ctx.state;
  const filter: Filter = { organizationId: tenant.organizationId, environment: tenant.environment, ...options.base };
  for (const field of ['createdAt', ...(options.dateFields ?? [])]) Object.assign(filter, dateRangeFilter(ctx, field));
  for (const [name, spec] of Object.entries(options.filters ?? {})) {
    const raw = queryValue(ctx, name);
    if (raw === undefined || raw === '') continue;
    const field = spec.field ?? name;
    if (spec.kind === 'boolean') {
      if (raw !== 'true' && raw !== 'false') throw new ValidationError(name, 'must be true or false');
      filter[field] = raw === 'true';
    } else if (spec.kind === 'csv') {
      filter[field] = { $in: csvQuery(ctx, name) ?? [] };
    } else {
      if (spec.values && !spec.values.includes(raw))
        throw new ValidationError(name, `must be one of ${spec.values.join(', ')}`);
      // A number stored as one (`visibility`): the string would match nothing.
      filter[field] = spec.kind === 'number' ? Number(raw) : raw;
    }
  }
  return filter;
}

/**
 * A page of a tenant's documents: `page`, `limit` (1–200, default 200), `createdAt[…]` (and other date bounds) and the
 * resource's own filters; newest first. Answers `{page, limit, count, hasMore, data}`.
 */
export async function listPage<T extends ReadDocument, V>(
  ctx: ApiContext,
  collection: Collection<T>,
  options: {
    filters?: ListFilters;
    base?: Filter;
    present(doc: NoInfer<T>): V /** Date fields besides createdAt that take `[gt|gte|lt|lte]` bounds. */;
    dateFields?: string[];
  },
): Promise<{ page: number; limit: number; count: number; hasMore: boolean; data: V[] }> {
  const limit = positiveInt(queryValue(ctx, 'limit'), 'limit', 200, 200);
  // Bounded so that the number of documents skipped stays an exact integer for every read store.
  const page = positiveInt(queryValue(ctx, 'page'), 'page', 1, Math.floor(Number.MAX_SAFE_INTEGER / limit));
  const filter = listFilter(ctx, options);
  const [count, docs] = await Promise.all([
    collection.count(filter),
    collection.find(filter, { sort: { createdAt: -1, _id: 1 }, skip: (page - 1) * limit, limit }),
  ]);
  return { page, limit, count, hasMore: page * limit < count, data: docs.map(options.present) };
}
