import type { Collection, Filter, ReadDocument } from '../read-store/read-store.ts';
import { ValidationError } from '../shared/errors.ts';
import { isTimeZone, UTC } from '../shared/time-zone.ts';
import type { ApiContext } from './api-context.ts';
import { BOUND_OPS, type Bound, boundsCondition, TIME_ZONE_MESSAGE } from './instant-range.ts';

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

/**
 * The zone a list's (or the export's) `timezone` names: UTC when absent or empty. Checked here as
 * well as by the route's schema, which does not see it spelt `timezone[]`; not a zone, a 400 naming it.
 */
export function queryZone(ctx: ApiContext): string {
  const zone = queryValue(ctx, 'timezone');
  if (!zone) return UTC;
  if (!isTimeZone(zone)) throw new ValidationError('timezone', TIME_ZONE_MESSAGE);
  return zone;
}

/** The `createdAt[gt]=…` (or `createdAt.gt`) style bounds sent on `field`, as sent. */
export function dateBounds(ctx: ApiContext, field: string): Bound[] {
  return BOUND_OPS.flatMap((op) => {
    const raw = queryValue(ctx, `${field}[${op}]`) ?? queryValue(ctx, `${field}.${op}`);
    return raw === undefined ? [] : [{ op, raw, name: `${field}[${op}]` }];
  });
}

/**
 * The bounds sent on `field`, checked as ISO 8601; a date alone stands for its whole day in `zone`
 * (UTC unless given), as the reports' `from` / `to` read it.
 */
function dateRangeFilter(ctx: ApiContext, field: string, zone: string): Filter {
  const condition = boundsCondition(dateBounds(ctx, field), zone);
  return Object.keys(condition).length ? { [field]: condition } : {};
}

export type ListFilters = Record<
  string,
  {
    field?: string;
    values?: readonly string[];
    kind?: 'string' | 'boolean' | 'csv' | 'number';
    /** Other spellings taken for a value (another document's), read as the value they name. */
    aliases?: Readonly<Record<string, string>>;
  }
>;

/** The reference's `visibility` filter: 10 (shown in the dashboard) or 20 (API only), stored as a number. */
export const VISIBILITY_FILTER = { values: ['10', '20'], kind: 'number' } as const;

/**
 * The tenant's filter a list route's query asks for: `createdAt[…]` (and other date bounds) and
 * the resource's own filters, checked (a 400 naming the parameter). Shared by lists and exports,
 * so a date alone in a bound is the same day in `timezone` (UTC unless given) for both.
 */
export function listFilter(
  ctx: ApiContext,
  options: { filters?: ListFilters; base?: Filter; dateFields?: string[] },
): Filter {
  const { tenant } = ctx.state;
  const filter: Filter = { organizationId: tenant.organizationId, environment: tenant.environment, ...options.base };
  const zone = queryZone(ctx);
  for (const field of ['createdAt', ...(options.dateFields ?? [])])
    Object.assign(filter, dateRangeFilter(ctx, field, zone));
  for (const [name, spec] of Object.entries(options.filters ?? {})) {
    const sent = queryValue(ctx, name);
    if (sent === undefined || sent === '') continue;
    const raw = (spec.aliases && Object.hasOwn(spec.aliases, sent) ? spec.aliases[sent] : undefined) ?? sent;
    const field = spec.field ?? name;
    if (spec.kind === 'boolean') {
      if (raw !== 'true' && raw !== 'false') throw new ValidationError(name, 'must be true or false');
      filter[field] = raw === 'true';
    } else if (spec.kind === 'csv') {
      filter[field] = { $in: csvQuery(ctx, name) ?? [] };
    } else {
      if (spec.values && !spec.values.includes(raw))
        throw new ValidationError(
          name,
          spec.values.length ? `must be one of ${spec.values.join(', ')}` : 'takes no value here: none is offered',
        );
      // A number stored as one (`visibility`): the string would match nothing.
      filter[field] = spec.kind === 'number' ? Number(raw) : raw;
    }
  }
  return filter;
}

/**
 * A page of a tenant's documents: `page`, `limit` (1–200, default 200), `createdAt[…]` (and other date bounds, in
 * `timezone`) and the resource's own filters; newest first. Answers `{page, limit, count, hasMore, data}`.
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
