import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import Router from '@koa/router';
import type { ApiState } from '../api-context.ts';
import { type MountedAreas, OPENAPI_PATH, openApiDocument } from '../schema/openapi-document.ts';
import { schemaRoutes } from '../schema/route.ts';
import { routeTableKey } from '../schema/document-key.ts';

const VERSION = (
  JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

const REDOC_PATH = '/docs/redoc.standalone.js';

/**
 * The API reference page's own policy: Redoc styles itself inline and runs its search in a blob
 * worker; everything else stays as strict as the hosted pages'.
 */
const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; base-uri 'none'; object-src 'none'; frame-ancestors 'none'";

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Weir API reference</title>
</head>
<body>
<redoc spec-url="${OPENAPI_PATH}" hide-download-button="false"></redoc>
<script src="${REDOC_PATH}"></script>
</body>
</html>
`;

/**
 * Redoc's footer draws its logo from Redocly's CDN, with no option to turn it off: the address is
 * replaced by an empty image, whose load error Redoc's own fallback answers by leaving the logo out
 * (as it does offline), so the page asks nothing of another origin and the CSP refuses nothing.
 */
const REDOC_CDN = /https:\/\/cdn\.redoc\.ly\/[^"'`\s]*/g;

/**
 * The source maps the bundle names, its own and its search worker's (inside a string, after an
 * escaped newline): Weir serves neither (the worker runs from a blob, where none could be), so a
 * browser's developer tools would ask for them in vain. Inline (`data:`) maps are kept.
 */
const SOURCE_MAP_COMMENT = /(?:\n|\\n)\/\/# sourceMappingURL=[\w.-]+\.map/g;

/** Redoc's browser bundle, from its npm package, without its CDN address or source map comments (read once, on first use). */
let redocBundle: string | undefined;
const bundle = () =>
  (redocBundle ??= readFileSync(createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js'), 'utf8')
    .replace(REDOC_CDN, 'data:,')
    .replace(SOURCE_MAP_COMMENT, ''));

/** Documents built by the Weirs of one process, by route table (`routeTableKey`): tests start hundreds. */
export type OpenApiDocuments = Map<string, string>;

/**
 * `GET /api/v1/openapi.json` (no key needed): the OpenAPI 3.1 document of every route `areas`
 * mounts, built once on first request (or taken from `documents`), naming `serverUrl` (the operator's
 * public URL) as its server; `GET /docs`: the API reference page rendering it, offline.
 */
export function apiDocsRoutes(
  areas: () => MountedAreas,
  served: { serverUrl?: string; documents?: OpenApiDocuments } = {},
): Router<ApiState> {
  const router = new Router<ApiState>();
  const routes = schemaRoutes(router, { tag: 'Docs', auth: 'public' });
  let document: string | undefined;
  const { documents, serverUrl } = served;
  const info = { ...(serverUrl === undefined ? {} : { serverUrl }), version: VERSION };
  const build = (): string => {
    if (!documents) return JSON.stringify(openApiDocument(areas(), info));
    const key = routeTableKey(areas(), info);
    let built = documents.get(key);
    if (built === undefined) {
      built = JSON.stringify(openApiDocument(areas(), info));
      documents.set(key, built);
    }
    return built;
  };

  routes.route({ method: 'get', path: OPENAPI_PATH, summary: 'This OpenAPI 3.1 document' }, (ctx) => {
    document ??= build();
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.type = 'application/json';
    ctx.body = document;
  });

  routes.route({ method: 'get', path: '/docs', summary: 'The API reference page', produces: 'text/html' }, (ctx) => {
    ctx.set('Content-Security-Policy', DOCS_CSP);
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('X-Frame-Options', 'DENY');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = PAGE;
  });

  routes.route(
    { method: 'get', path: REDOC_PATH, summary: "The reference page's script (Redoc)", produces: 'text/javascript' },
    (ctx) => {
      ctx.set('Cache-Control', 'public, max-age=86400');
      ctx.type = 'text/javascript; charset=utf-8';
      ctx.body = bundle();
    },
  );

  return router;
}

/** Whether a request is for the docs area (answered before `/api/` asks for a key). */
export const isDocsPath = (path: string) => path === OPENAPI_PATH || path === '/docs' || path === REDOC_PATH;
