import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Router from '@koa/router';
import type { ApiState } from '../read-api/api-context.ts';

/**
 * The hosted pages' scripts and stylesheet, served by Weir itself from the package (no CDN), so
 * the pages' Content-Security-Policy allows scripts and styles from Weir's own origin only.
 */
const FILES = {
  'hosted.css': 'text/css; charset=utf-8',
  'checkout.js': 'text/javascript; charset=utf-8',
  'payment-link.js': 'text/javascript; charset=utf-8',
  'invoice.css': 'text/css; charset=utf-8',
  'invoice.js': 'text/javascript; charset=utf-8',
} as const;

export type AssetName = keyof typeof FILES;

type Asset = { body: Buffer; type: string; version: string };

/** Read once at start: a missing file fails the start, not a payer's page. */
const ASSETS = new Map<string, Asset>(
  Object.entries(FILES).map(([name, type]) => {
    const body = readFileSync(new URL(`./assets/${name}`, import.meta.url));
    return [name, { body, type, version: createHash('sha256').update(body).digest('hex').slice(0, 16) }];
  }),
);

/** A year: an asset's URL carries its content's hash, so a new version has a new URL. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** An asset asked for without its current hash (an old page, or a hand-typed URL): briefly. */
const SHORT = 'public, max-age=300';

/** Where a page finds an asset: its path with the content's hash, cacheable for a year. */
export const assetUrl = (name: AssetName): string => `/assets/${name}?v=${ASSETS.get(name)!.version}`;

const HEX_COLOR = /^[0-9a-fA-F]{3}(?:[0-9a-fA-F]{3})?$/;

/** The stylesheet that gives a page its organization's brand colour (`#rgb` or `#rrggbb`), never inline. */
export const brandStylesheetUrl = (color: string): string | null =>
  color.startsWith('#') && HEX_COLOR.test(color.slice(1)) ? `/assets/brand/${color.slice(1).toLowerCase()}.css` : null;

/** `GET /assets/{name}` and `GET /assets/brand/{rgb}.css`, with caching headers and ETags. */
export function hostedAssetRoutes(): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/assets' });

  router.get('/brand/:file', (ctx) => {
    const match = /^([0-9a-f]{3}|[0-9a-f]{6})\.css$/.exec(ctx.params.file ?? '');
    if (!match) return;
    ctx.status = 200;
    ctx.type = 'text/css; charset=utf-8';
    ctx.set('Cache-Control', IMMUTABLE);
    ctx.body = `:root { --brand: #${match[1]}; }\n`;
  });

  router.get('/:name', (ctx) => {
    const asset = ASSETS.get(ctx.params.name ?? '');
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
  });

  return router;
}
