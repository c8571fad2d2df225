import type { Collection, Filter, ReadDocument } from '../read-store/read-store.ts';
import { ValidationError } from '../shared/errors.ts';
import type { ApiContext } from './api-context.ts';

const DATE_OPS = ['gt', 'gte', 'lt', 'lte'] as const;

function positiveInt(raw: string | undefined, name: string, fallback: number, max?: number): number {
  if (raw === undefined || raw === '') return fallback;
  if (!/^[0-9]+$/.test(raw)) throw new ValidationError(name, 'must be a positive integer');
  const n = Number(raw);
  if (n < 1) throw new ValidationError(name, 'must be at least 1');
  if (max !== undefined && n > max) throw new ValidationError(name, `must be at most ${max}`);
  return n;
}

const queryValue = (ctx: ApiContext, name: string): string | undefined => {
  const v = ctx.query[name];
  return Array.isArray(v) ? v[v.length - 1] : v;
};

/** `createdAt[gt]=…` (or `createdAt.gt`) style date bounds, checked as ISO 8601. */
function createdAtFilter(ctx: ApiContext): Filter {
  const range: Record<string, string> = {};
  for (const op of DATE_OPS) {
    const raw = queryValue(ctx, `createdAt[${op}]`) ?? queryValue(ctx, `createdAt.${op}`);
    if (raw === undefined) continue;
    const time = Date.parse(raw);
    if (Number.isNaN(time)) throw new ValidationError(`createdAt[${op}]`, 'must be an ISO 8601 date or timestamp');
    range[`$${op}`] = new Date(time).toISOString();
  }
  return Object.keys(range).length ? { createdAt: range } : {};
}

export type ListFilters = Record<string, { field?: string; values?: readonly string[]; kind?: 'string' | 'boolean' | 'csv' }>;

/**
 * A page of a tenant's documents: `page`, `limit` (1–200, default 200), `createdAt[…]` and the
 * resource's own filters; newest first. Answers `{page, limit, count, hasMore, data}`.
 */
export async function listPage<T extends ReadDocument, V>(
  ctx: ApiContext,
  collection: Collection<T>,
  options: { filters?: ListFilters; base?: Filter; present(doc: NoInfer<T>): V },
): Promise<{ page: number; limit: number; count: number; hasMore: boolean; data: V[] }> {
  const page = positiveInt(queryValue(ctx, 'page'), 'page', 1);
  const limit = positiveInt(queryValue(ctx, 'limit'), 'limit', 200, 200);
  const { tenant } = ctx.state;
  const filter: Filter = { organizationId: tenant.organizationId, environment: tenant.environment, ...options.base, ...createdAtFilter(ctx) };
  for (const [name, spec] of Object.entries(options.filters ?? {})) {
    const raw = queryValue(ctx, name);
    if (raw === undefined || raw === '') continue;
    const field = spec.field ?? name;
    if (spec.kind === 'boolean') {
      if (raw !== 'true' && raw !== 'false') throw new ValidationError(name, 'must be true or false');
      filter[field] = raw === 'true';
    } else if (spec.kind === 'csv') {
      filter[field] = { $in: raw.split(',').map((s) => s.trim()).filter(Boolean) };
    } else {
      if (spec.values && !spec.values.includes(raw)) throw new ValidationError(name, `must be one of ${spec.values.join(', ')}`);
      filter[field] = raw;
    }
  }
  const [count, docs] = await Promise.all([
    collection.count(filter),
    collection.find(filter, { sort: { createdAt: -1, _id: 1 }, skip: (page - 1) * limit, limit }),
  ]);
  return { page, limit, count, hasMore: page * limit < count, data: docs.map(options.present) };
}
