import type { ApiContext } from './api-context.ts';

/**
 * Serialized responses for read-model documents. Stored documents are immutable (a change is a
 * new object), so a document's JSON can be kept for as long as the document itself lives.
 */
export function cachedJson<TDoc extends object>(present: (doc: TDoc) => unknown): (ctx: ApiContext, doc: TDoc) => void {
  const cache = new WeakMap<TDoc, string>();
  return (ctx, doc) => {
    let json = Object.isFrozen(doc) ? cache.get(doc) : undefined;
    if (json === undefined) {
      json = JSON.stringify(present(doc));
      if (Object.isFrozen(doc)) cache.set(doc, json);
    }
    ctx.type = 'application/json';
    ctx.body = json;
  };
}
