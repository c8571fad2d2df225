import type { ApiContext } from './api-context.ts';
import { csvQuery, positiveInt, queryValue } from './pagination.ts';

export type ArrayPage<V> = { page: number; limit: number; count: number; hasMore: boolean; data: V[] };

/** The `ids` filter of the reference's lists (`ids=a,b` or `ids=a&ids=b`), or null when absent. */
export function idsFilter(ctx: ApiContext): Set<string> | null {
  const list = csvQuery(ctx, 'ids');
  return list === undefined ? null : new Set(list);
}

/**
 * A page of a list held in memory (networks, a few wallet addresses), in the list shape of the
 * stored collections: `page` and `limit` (1–200, default 200) as `listPage` reads them.
 */
export function arrayPage<V>(ctx: ApiContext, items: readonly V[]): ArrayPage<V> {
  const limit = positiveInt(queryValue(ctx, 'limit'), 'limit', 200, 200);
  const page = positiveInt(queryValue(ctx, 'page'), 'page', 1, Math.floor(Number.MAX_SAFE_INTEGER / limit));
  const start = (page - 1) * limit;
  return {
    page,
    limit,
    count: items.length,
    hasMore: start + limit < items.length,
    data: items.slice(start, start + limit),
  };
}
