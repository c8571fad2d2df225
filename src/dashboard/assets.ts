import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import type Koa from 'koa';
import { loadStaticAssets, serveStaticAsset } from '../read-api/static-assets.ts';

const CSS = 'text/css; charset=utf-8';
const JS = 'text/javascript; charset=utf-8';
const require = createRequire(import.meta.url);

/** The dashboard's stylesheet and scripts, htmx from its package: served by Weir, no CDN, no build step. */
const ASSETS = loadStaticAssets({
  'dashboard.css': { type: CSS, url: new URL('./assets/dashboard.css', import.meta.url) },
  'dashboard.js': { type: JS, url: new URL('./assets/dashboard.js', import.meta.url) },
  'htmx.min.js': { type: JS, url: pathToFileURL(require.resolve('htmx.org/dist/htmx.min.js')) },
});

export type DashboardAssetName = 'dashboard.css' | 'dashboard.js' | 'htmx.min.js';

/** Where a page finds a dashboard asset: its path with the content's hash, cacheable for a year. */
export const dashboardAssetUrl = (name: DashboardAssetName): string =>
  `/dashboard/assets/${name}?v=${ASSETS.get(name)!.version}`;

const PREFIX = '/dashboard/assets/';

/** `GET /dashboard/assets/{name}`; true when it answered. No sign-in needed (the login page uses them). */
export function serveDashboardAsset(ctx: Koa.Context): boolean {
  if (!ctx.path.startsWith(PREFIX) || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return false;
  const asset = ASSETS.get(ctx.path.slice(PREFIX.length));
  serveStaticAsset(ctx, asset);
  return asset !== undefined;
}
