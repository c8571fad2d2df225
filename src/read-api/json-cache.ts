import type { ApiContext } from './api-context.ts';

/** What `ctx.type = 'application/json'` sets, written directly (no MIME lookup per response). */
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * Serialized responses for read-model documents. Stored documents are immutable (a change is a
 * new object), so a document's JSON can be kept for as long as the document itself lives. It is
 * kept as UTF-8 bytes: Koa then takes the length as it is and Node writes the bytes without
 * encoding the text again on every response.
 */
export function cachedJson<TDoc extends object>(present: (doc: TDoc) => unknown): (ctx: ApiContext, doc: TDoc) => void {
  const cache = new WeakMap<TDoc, Buffer>();
  return (ctx, doc) => {
    let json = Object.isFrozen(doc) ? cache.get(doc) : undefined;
    if (json === undefined) {
      json = Buffer.from(JSON.stringify(present(doc)));
      if (Object.isFrozen(doc)) cache.set(doc, json);
    }
    ctx.set('Content-Type', JSON_CONTENT_TYPE);
    ctx.body = json;
  };
}
