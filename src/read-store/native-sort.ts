import { isArrayOnPath, plainValueAt, splitPlainPath } from './native-match.ts';
import type { ReadDocument, Sort } from './read-store.ts';

/**
 * `docs` in `sort`'s order with Array.prototype.sort, when every sort field holds a string in every
 * document, or a number (not NaN) in every one, with no array on the way; otherwise null (mingo
 * sorts them: mixed types, missing fields and arrays follow MongoDB's order of types there).
 *
 * Same order as mingo's `$sort` for those documents: it sorts strings by UTF-16 code units and
 * numbers numerically (equal values, 0 and -0 alike, tie), and is stable, ties keeping the
 * input's order, in both directions. Grouping by each value, as mingo does, cost the most of a
 * page of a 10,000-document list.
 */
export function sortNatively(docs: readonly ReadDocument[], sort: Sort): ReadDocument[] | null {
  const fields = Object.keys(sort);
  const columns: (string[] | number[])[] = [];
  for (const field of fields) {
    const path = splitPlainPath(field);
    if (path === null) return null;
    const values: unknown[] = new Array<unknown>(docs.length);
    let kind: 'string' | 'number' | null = null;
    for (let i = 0; i < docs.length; i++) {
      const value = plainValueAt(docs[i]!, path);
      if (isArrayOnPath(value)) return null;
      const type =
        typeof value === 'string' ? 'string' : typeof value === 'number' && !Number.isNaN(value) ? 'number' : null;
      if (type === null || (kind !== null && type !== kind)) return null;
      kind = type;
      values[i] = value;
    }
    columns.push(values as string[] | number[]);
  }
  const directions = fields.map((field) => sort[field]!);
  const order = Array.from(docs.keys());
  order.sort((a, b) => {
    for (let k = 0; k < columns.length; k++) {
      const column = columns[k]!;
      const x = column[a]!;
      const y = column[b]!;
      if (x < y) return -directions[k]!;
      if (x > y) return directions[k]!;
    }
    return 0;
  });
  return order.map((i) => docs[i]!);
}
