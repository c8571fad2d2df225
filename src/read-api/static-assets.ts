import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type Koa from 'koa';

/** A file served from the package, with the hash its URL carries. */
export type StaticAsset = { body: Buffer; type: string; version: string };

/** Read once at start: a missing file fails the start, not a page. */
export function loadStaticAssets(files: Record<string, { type: string; url: URL }>): Map<string, StaticAsset> {
  return new Map(
    Object.entries(files).map(([name, { type, url }]) => {
      const body = readFileSync(url);
      return [name, { body, type, version: createHash('sha256').update(body).digest('hex').slice(0, 16) }];
    }),
  );
}

/** A year: an asset's URL carries its content's hash, so a new version has a new URL. */
export const IMMUTABLE = 'public, max-age=31536000, immutable';
/** An asset asked for without its current hash (an old page, or a hand-typed URL): briefly. */
const SHORT = 'public, max-age=300';

/** Answers with the asset, its ETag and caching (a year when asked for with its current hash); nothing when absent. */
export function serveStaticAsset(ctx: Koa.Context, asset: StaticAsset | undefined): void {
  if (!asset) return;
  ctx.status = 200;
  ctx.type = asset.type;
  ctx.etag = asset.version;
  ctx.set('Cache-Control', ctx.query.v === asset.version ? IMMUTABLE : SHORT);
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  ctx.body = asset.body;
}
