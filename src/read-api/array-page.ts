import { ValidationError } from '../shared/errors.ts';
import type { ApiContext } from './api-context.ts';

export type ArrayPage<V> = { page: number; limit: number; count: number; hasMore: boolean; data: V[] };

function positiveInt(ctx: ApiContext, name: string, fallback: number, max: number): number {
  const value = ctx.query[name];
  const raw = Array.isArray(value) ? value[value.length - 1] : value;
  if (raw === undefined || raw === '') return fallback;
  if (!/^[0-9]+$/.test(raw)) throw new ValidationError(name, 'must be a positive integer');
  const n = Number(raw);
  if (n < 1) throw new ValidationError(name, 'must be at least 1');
  if (n > max) throw new ValidationError(name, `must be at most ${max}`);
  return n;
}

/** The `ids` filter of the reference's lists (`ids=a,b` or `ids=a&ids=b`), or null when absent. */
export function idsFilter(ctx: ApiContext): Set<string> | null {
  const value = ctx.query.ids ?? ctx.query['ids[]'];
  if (value === undefined) return null;
  const list = (Array.isArray(value) ? value : [value]).flatMap((v) => v.split(','));
  return new Set(list.map((v) => v.trim()).filter(Boolean));
}

/**
 * A page of a list held in memory (networks, a few wallet addresses), in the list shape of the
 * stored collections: `page` and `limit` (1–200, default 200) as `listPage` reads them.
 */
export function arrayPage<V>(ctx: ApiContext, items: readonly V[]): ArrayPage<V> {
  const limit = positiveInt(ctx, 'limit', 200, 200);
  const page = positiveInt(ctx, 'page', 1, Math.floor(Number.MAX_SAFE_INTEGER / limit));
  const start = (page - 1) * limit;
  return {
    page,
    limit,
    count: items.length,
    hasMore: start + limit < items.length,
    data: items.slice(start, start + limit),
  };
}
