import Router, { type RouterContext } from '@koa/router';
import type { ApiState } from '../read-api/api-context.ts';
import { z } from '../read-api/schema/fields.ts';
import { schemaRoutes } from '../read-api/schema/route.ts';
import { IMMUTABLE, loadStaticAssets, serveStaticAsset } from '../read-api/static-assets.ts';

const CSS = 'text/css; charset=utf-8';
const JS = 'text/javascript; charset=utf-8';
const SVG = 'image/svg+xml';

/** Icons drawn for Weir (assets/icons), served as `icon-<name>.svg`. */
const ICONS = [
  'favicon',
  'usdc',
  'usdt',
  'dai',
  'eth',
  'token',
  'network',
  'local',
  'ethereum',
  'polygon',
  'base',
  'arbitrum',
  'optimism',
  'bsc',
  'tron',
  'trx',
] as const;
export type IconName = (typeof ICONS)[number];

/**
 * The hosted pages' scripts, stylesheet and icons, served by Weir itself from the package (no
 * CDN), so the pages' Content-Security-Policy allows scripts and styles from Weir's own origin only.
 */
const FILES = {
  'hosted.css': { type: CSS, file: 'hosted.css' },
  'no-script.css': { type: CSS, file: 'no-script.css' },
  'checkout.js': { type: JS, file: 'checkout.js' },
  'hosted-fetch.js': { type: JS, file: 'hosted-fetch.js' },
  'payment-link.js': { type: JS, file: 'payment-link.js' },
  'wallet.js': { type: JS, file: 'wallet.js' },
  'solana-wallet.js': { type: JS, file: 'solana-wallet.js' },
  'tron-wallet.js': { type: JS, file: 'tron-wallet.js' },
  'wallet.css': { type: CSS, file: 'wallet.css' },
  'invoice.css': { type: CSS, file: 'invoice.css' },
  'invoice.js': { type: JS, file: 'invoice.js' },
  ...Object.fromEntries(ICONS.map((name) => [`icon-${name}.svg`, { type: SVG, file: `icons/${name}.svg` }])),
} as Record<
  | 'hosted.css'
  | 'no-script.css'
  | 'checkout.js'
  | 'hosted-fetch.js'
  | 'payment-link.js'
  | 'wallet.js'
  | 'solana-wallet.js'
  | 'tron-wallet.js'
  | 'wallet.css'
  | 'invoice.css'
  | 'invoice.js'
  | `icon-${IconName}.svg`,
  { type: string; file: string }
>;

export type AssetName = keyof typeof FILES;

const ASSETS = loadStaticAssets(
  Object.fromEntries(
    Object.entries(FILES).map(([name, { type, file }]) => [
      name,
      { type, url: new URL(`./assets/${file}`, import.meta.url) },
    ]),
  ),
);

/** Where a page finds an asset: its path with the content's hash, cacheable for a year. */
export const assetUrl = (name: AssetName): string => `/assets/${name}?v=${ASSETS.get(name)!.version}`;

/** Where a page finds one of Weir's icons. */
export const iconUrl = (name: IconName): string => assetUrl(`icon-${name}.svg`);

const HEX_COLOR = /^[0-9a-fA-F]{3}(?:[0-9a-fA-F]{3})?$/;

/** The stylesheet that gives a page its organization's brand colour (`#rgb` or `#rrggbb`), never inline. */
export const brandStylesheetUrl = (color: string): string | null =>
  color.startsWith('#') && HEX_COLOR.test(color.slice(1)) ? `/assets/brand/${color.slice(1).toLowerCase()}.css` : null;

/**
 * `GET /assets/{name}` and `GET /assets/brand/{rgb}.css`, with caching headers and ETags, and
 * `GET /favicon.ico` (the SVG favicon: browsers ask for that path on their own).
 */
export function hostedAssetRoutes(): Router<ApiState> {
  const router = new Router<ApiState>();
  const routes = schemaRoutes(router, { tag: 'Static assets', auth: 'public' });
  const missing = { status: 404, description: 'No such asset' };

  routes.route(
    {
      method: 'get',
      path: '/assets/brand/:file',
      summary: "A brand colour's stylesheet (`<rgb>.css`), which hosted pages link instead of an inline style",
      params: z.object({ file: z.string() }),
      produces: 'text/css',
      pages: [{ status: 200, description: 'The stylesheet, cacheable for a year' }, missing],
    },
    (ctx) => {
      const match = /^([0-9a-f]{3}|[0-9a-f]{6})\.css$/.exec(ctx.params.file ?? '');
      if (!match) return;
      ctx.status = 200;
      ctx.type = CSS;
      ctx.set('Cache-Control', IMMUTABLE);
      ctx.body = `:root { --brand: #${match[1]}; }\n`;
    },
  );

  const serve = (ctx: RouterContext<ApiState>, name: string) => serveStaticAsset(ctx, ASSETS.get(name));
  routes.route(
    {
      method: 'get',
      path: '/assets/:name',
      summary: "The hosted pages' scripts, stylesheets and icons, from the package (`?v=` is the content's hash)",
      params: z.object({ name: z.string() }),
      produces: ['text/css', 'text/javascript', 'image/svg+xml'],
      pages: [
        { status: 200, description: 'The asset, with an ETag' },
        { status: 304, description: 'Not modified' },
        missing,
      ],
    },
    (ctx) => serve(ctx, ctx.params.name ?? ''),
  );
  routes.route(
    {
      method: 'get',
      path: '/favicon.ico',
      summary: "Weir's favicon (an SVG), where browsers look for it",
      produces: 'image/svg+xml',
      pages: [{ status: 200, description: 'The icon' }],
    },
    (ctx) => serve(ctx, 'icon-favicon.svg'),
  );

  return router;
}
