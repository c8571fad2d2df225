import type Koa from 'koa';

/**
 * What every hosted page (and every other answer under its paths) is sent with: scripts and styles
 * from Weir's own origin only (no inline script or style, no eval), no framing by any site (with
 * X-Frame-Options for browsers older than frame-ancestors), no <base> or plugins, and no Referer,
 * since a page's URL (a checkout session's id) lets its holder act on the session.
 */
export const HOSTED_PAGE_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src * data:; connect-src 'self'; base-uri 'none'; object-src 'none'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
} as const;

/** Sets HOSTED_PAGE_HEADERS first, so error answers carry them too. */
export function hostedPageHeaders<State>(): Koa.Middleware<State> {
  return (ctx, next) => {
    ctx.set(HOSTED_PAGE_HEADERS);
    return next();
  };
}
